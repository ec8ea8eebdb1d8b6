// Which prompt chunks of one scheduler turn share a graph run. A run over several rows
// reads the weights once for all of them (the step is bound by that read on a CPU), but
// pads every row to the longest chunk and the longest cached past: rows are grouped
// only while the padding stays a small share of the work, and never a chunk the graph
// must run alone (GroupQueryAttention takes several tokens after a past only at batch 1).

export interface PrefillChunk<T> {
  item: T;
  /** Tokens already in the row's cache. */
  past: number;
  /** New tokens to run. */
  tokens: number;
}

/** Padded positions may exceed real ones by this factor, plus a few per row (short prompts differ by a few tokens). */
const PADDING_FACTOR = 1.5;
const SLACK_PER_ROW = 16;

export function prefillGroups<T>(chunks: PrefillChunk<T>[], maxRows = 16, runsAlone: (c: PrefillChunk<T>) => boolean = () => false): PrefillChunk<T>[][] {
  const groups: PrefillChunk<T>[][] = [];
  const byLength = [...chunks].sort((a, b) => b.tokens - a.tokens);
  let open: PrefillChunk<T>[] | undefined; // the group that takes the next chunk if padding allows
  for (const chunk of byLength) {
    if (runsAlone(chunk)) groups.push([chunk]);
    else if (open && open.length < maxRows && paddingAllows([...open, chunk])) open.push(chunk);
    else groups.push((open = [chunk]));
  }
  return groups;
}

function paddingAllows(group: PrefillChunk<unknown>[]): boolean {
  const rows = group.length;
  const within = (key: 'past' | 'tokens') => {
    const longest = Math.max(...group.map((c) => c[key]));
    const real = group.reduce((n, c) => n + c[key], 0);
    return rows * longest <= PADDING_FACTOR * real + SLACK_PER_ROW * rows;
  };
  return within('tokens') && within('past');
}
