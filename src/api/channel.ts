// A small unbounded async queue. The engine reports tokens through callbacks while
// the responders want to iterate; this joins the two without buffering a whole
// generation (each item is handed on as soon as it is pushed).
export class Channel<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #waiters: (() => void)[] = [];
  #closed = false;

  push(item: T): void {
    if (this.#closed) return;
    this.#items.push(item);
    this.#wake();
  }

  close(): void {
    this.#closed = true;
    this.#wake();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Waits for the next item without taking it; undefined once closed and empty. */
  async peek(): Promise<T | undefined> {
    while (this.#items.length === 0 && !this.#closed) await new Promise<void>((r) => this.#waiters.push(r));
    return this.#items[0];
  }

  async next(): Promise<IteratorResult<T, undefined>> {
    await this.peek();
    if (this.#items.length === 0) return { done: true, value: undefined };
    return { done: false, value: this.#items.shift() as T };
  }

  [Symbol.asyncIterator](): AsyncIterator<T, undefined> {
    return { next: () => this.next() };
  }

  #wake(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }
}
