// A seeded PRNG (mulberry32) so that every fixture is the same bytes on every run.
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Standard normal (Box–Muller). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  /** A Float32Array of normals with the given standard deviation. */
  normals(n: number, std: number): Float32Array {
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) a[i] = this.normal() * std;
    return a;
  }
  /** A random unit vector of length n. */
  unit(n: number): Float64Array {
    const a = new Float64Array(n);
    let s = 0;
    for (let i = 0; i < n; i++) {
      a[i] = this.normal();
      s += a[i]! * a[i]!;
    }
    const k = 1 / Math.sqrt(s);
    for (let i = 0; i < n; i++) a[i]! *= k;
    return a;
  }
}
