import { seqKvBytes, slicePrefix, type KvShape, type SeqKv } from './layout.js';

/** A stored cache: the KV of `tokens` (one entry per token). */
interface Entry {
  tokens: number[];
  kv: SeqKv;
  bytes: number;
  node: RadixNode;
}

/** A radix tree node: `edge` is the run of token ids from its parent to it. */
interface RadixNode {
  edge: number[];
  parent: RadixNode | null;
  children: Map<number, RadixNode>;
  entry?: Entry;
}

export interface PrefixMatch {
  /** How many leading tokens the cache holds KV for. */
  length: number;
  kv: SeqKv;
}

/**
 * KV of prompt prefixes seen before, reused across requests and turns. A radix
 * tree over token ids finds the longest cached prefix of a new prompt; any entry
 * below the point where the walk stops holds KV for that prefix, since an entry's
 * KV covers every prefix of its tokens. Entries are evicted least recently used
 * first to stay within the byte budget.
 */
export class PrefixCache {
  private readonly root: RadixNode = { edge: [], parent: null, children: new Map() };
  /** Insertion order is recency order: a use moves an entry to the end. */
  private readonly lru = new Map<Entry, true>();
  private total = 0;

  constructor(
    private readonly shape: KvShape,
    private readonly budgetBytes: number,
  ) {}

  get bytes(): number {
    return this.total;
  }

  get entries(): number {
    return this.lru.size;
  }

  /** The longest cached prefix of `tokens`, at most `limit` long. */
  match(tokens: number[], limit = tokens.length): PrefixMatch | null {
    const { node, depth } = this.walk(tokens, limit);
    if (depth === 0) return null;
    const entry = this.anyEntryBelow(node);
    if (!entry) return null;
    this.touch(entry);
    return { length: depth, kv: slicePrefix(this.shape, entry.kv, depth) };
  }

  /** Whether an entry covers all of `tokens` already (storing them would add nothing). */
  holds(tokens: number[]): boolean {
    const { node, depth } = this.walk(tokens, tokens.length);
    return depth > 0 && depth === tokens.length && this.anyEntryBelow(node) !== undefined;
  }

  /** How far down the tree `tokens` (at most `limit` of them) lead, and the node where the walk stops. */
  private walk(tokens: number[], limit: number): { node: RadixNode; depth: number } {
    let node = this.root;
    let depth = 0;
    while (depth < limit) {
      const child = node.children.get(tokens[depth]);
      if (!child) break;
      let k = 0;
      while (k < child.edge.length && depth + k < limit && child.edge[k] === tokens[depth + k]) k++;
      depth += k;
      node = child;
      if (k < child.edge.length) break;
    }
    return { node, depth };
  }

  /** Stores the KV of `tokens`. Entries it makes redundant (its own prefixes) are dropped. */
  insert(tokens: number[], kv: SeqKv): void {
    if (tokens.length === 0 || kv.length !== tokens.length) return;
    const bytes = seqKvBytes(kv);
    if (bytes > this.budgetBytes) return;
    const node = this.nodeFor(tokens);
    if (node.entry) {
      this.touch(node.entry);
      return;
    }
    const entry: Entry = { tokens, kv, bytes, node };
    node.entry = entry;
    this.lru.set(entry, true);
    this.total += bytes;
    for (let up = node.parent; up; up = up.parent) if (up.entry) this.remove(up.entry);
    while (this.total > this.budgetBytes) this.remove(this.lru.keys().next().value!);
  }

  clear(): void {
    for (const e of [...this.lru.keys()]) this.remove(e);
  }

  private touch(entry: Entry): void {
    this.lru.delete(entry);
    this.lru.set(entry, true);
  }

  private remove(entry: Entry): void {
    this.lru.delete(entry);
    this.total -= entry.bytes;
    const node = entry.node;
    node.entry = undefined;
    this.prune(node);
  }

  /** Drops nodes left with no entry and no children; merges a lone child into its parent. */
  private prune(node: RadixNode): void {
    let n: RadixNode | null = node;
    while (n && n.parent && !n.entry && n.children.size === 0) {
      n.parent.children.delete(n.edge[0]);
      n = n.parent;
    }
    if (n && n.parent && !n.entry && n.children.size === 1) {
      const [child] = n.children.values();
      child.edge = [...n.edge, ...child.edge];
      child.parent = n.parent;
      n.parent.children.set(child.edge[0], child);
    }
  }

  private anyEntryBelow(node: RadixNode): Entry | undefined {
    for (let n: RadixNode | undefined = node; n; n = n.children.values().next().value) {
      if (n.entry) return n.entry;
    }
    return undefined;
  }

  /** The node whose path spells `tokens`, splitting an edge where needed. */
  private nodeFor(tokens: number[]): RadixNode {
    let node = this.root;
    let depth = 0;
    while (depth < tokens.length) {
      const child = node.children.get(tokens[depth]);
      if (!child) {
        const leaf: RadixNode = { edge: tokens.slice(depth), parent: node, children: new Map() };
        node.children.set(tokens[depth], leaf);
        return leaf;
      }
      let k = 0;
      while (k < child.edge.length && depth + k < tokens.length && child.edge[k] === tokens[depth + k]) k++;
      if (k < child.edge.length) {
        const mid: RadixNode = { edge: child.edge.slice(0, k), parent: node, children: new Map() };
        node.children.set(mid.edge[0], mid);
        child.edge = child.edge.slice(k);
        child.parent = mid;
        mid.children.set(child.edge[0], child);
      }
      node = child.parent === node ? child : child.parent!;
      depth += k;
    }
    return node;
  }
}
