// Drafts from a small model of the same tokenizer (a catalog entry's `draft`): for each sequence
// it keeps a cache of its own, catches it up with the sequence's tokens, and decodes greedily as
// many tokens as the policy asks for. Its cache holds what it was fed, its own drafts included;
// at the next proposal it is cut back to the longest prefix it shares with the sequence (the
// rejected drafts leave it) and fed the rest. Greedy drafts are deterministic given the sequence,
// so the accept rule of the verify step stays exact.
import type { BatchKv, SeqCache } from '../kv/layout.js';
import { isOnDevice } from '../kv/layout.js';
import type { CausalLM } from '../models/causal-lm.js';

interface DraftState {
  /** The tokens whose KV the cache holds, in order. */
  tokens: number[];
  kv: SeqCache | null;
}

export class DraftModel {
  private readonly states = new Map<string, DraftState>();

  /** `vocabSize`: the target's; a draft token past it (a padded embedding of the draft's) ends the draft. */
  constructor(
    readonly lm: CausalLM,
    private readonly vocabSize: number,
  ) {}

  /** `count` tokens the draft model expects after `history` (its greedy continuation). */
  async propose(id: string, history: readonly number[], count: number): Promise<number[]> {
    const state = this.states.get(id) ?? { tokens: [], kv: null };
    this.states.set(id, state);
    let shared = 0;
    while (shared < state.tokens.length && shared < history.length - 1 && state.tokens[shared] === history[shared]) shared++;
    await this.cut(state, shared);
    const draft: number[] = [];
    let feed = history.slice(shared);
    while (draft.length < count) {
      const { logits, kv } = await this.lm.prefill(feed as number[], state.kv);
      state.kv = kv;
      state.tokens.push(...feed);
      const [best] = await logits.step.best([logits.index]);
      logits.step.dispose();
      const token = best!.ids[0]!;
      if (token >= this.vocabSize) break;
      draft.push(token);
      feed = [token];
    }
    return draft;
  }

  /** Frees a sequence's draft cache (it finished, failed or was cancelled). */
  forget(id: string): void {
    const state = this.states.get(id);
    if (state) this.lm.release(state.kv);
    this.states.delete(id);
  }

  /** Cuts a state's cache to its first `length` tokens. */
  private async cut(state: DraftState, length: number): Promise<void> {
    if (length === state.tokens.length) return;
    state.tokens.length = length;
    const kv = state.kv;
    if (!kv || length === 0) {
      this.lm.release(kv);
      state.kv = null;
      return;
    }
    // A sequence's cache is a batch of one unpadded row: the same layout.
    const batch: BatchKv = isOnDevice(kv) ? { width: kv.length, pads: [0], padding: this.lm.io.padding, data: null, device: kv.device } : { width: kv.length, pads: [0], padding: this.lm.io.padding, data: kv.data };
    state.kv = null; // keepPrefix consumes it, also when it fails
    const kept = await this.lm.keepPrefix(batch, length);
    state.kv = kept.device ? { length, device: kept.device } : { length, data: kept.data! };
  }
}
