// Recent internal faults, kept in memory for the status page. A 500 tells the
// client to look at /status; this is what it finds there (when, which request),
// never the fault's own message, which may hold paths or internals.
export interface Incident {
  at: string; // ISO time
  requestId: string;
  method: string;
  path: string;
  status: number;
}

export class IncidentLog {
  #items: Incident[] = [];
  constructor(private readonly capacity = 20) {}

  add(i: Incident): void {
    this.#items.unshift(i);
    if (this.#items.length > this.capacity) this.#items.length = this.capacity;
  }

  list(): readonly Incident[] {
    return this.#items;
  }
}
