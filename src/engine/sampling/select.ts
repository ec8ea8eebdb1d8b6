/**
 * The `n` first items of `items` in `cmp` order, sorted, without sorting the rest:
 * quickselect moves them to the front (in place), then only they are sorted. With a
 * total order (ties broken by id) the result is the same as a full sort's first n.
 */
export function firstSorted<T>(items: T[], n: number, cmp: (a: T, b: T) => number): T[] {
  n = Math.min(n, items.length);
  let lo = 0;
  let hi = items.length - 1;
  while (lo < hi && n < items.length) {
    // Median of three as the pivot keeps sorted and reversed inputs linear.
    const mid = (lo + hi) >> 1;
    const trio = [items[lo], items[mid], items[hi]].sort(cmp);
    const pivot = trio[1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (cmp(items[i], pivot) < 0) i++;
      while (cmp(items[j], pivot) > 0) j--;
      if (i <= j) {
        [items[i], items[j]] = [items[j], items[i]];
        i++;
        j--;
      }
    }
    // Now items[lo..j] ≤ pivot ≤ items[i..hi]; keep partitioning the side holding position n.
    if (n - 1 <= j) hi = j;
    else if (n - 1 >= i) lo = i;
    else break;
  }
  return items.slice(0, n).sort(cmp);
}
