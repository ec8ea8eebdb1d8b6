// What config.json says of a `*ForSequenceClassification` head: how many labels, and the
// activation sentence-transformers' CrossEncoder puts on its logits.

/** The activations sentence-transformers' CrossEncoder may name, by their torch path. */
const ACTIVATIONS: Record<string, (x: number) => number> = {
  'torch.nn.modules.linear.Identity': (x) => x,
  'torch.nn.modules.activation.Sigmoid': (x) => 1 / (1 + Math.exp(-x)),
  'torch.nn.modules.activation.Tanh': Math.tanh,
};

export interface ClassifierConfig {
  architectures?: string[];
  id2label?: Record<string, string>;
  num_labels?: number;
  /** sentence-transformers 4 and later. */
  sentence_transformers?: { activation_fn?: string };
  /** sentence-transformers before 4 (ms-marco-MiniLM's: Identity). */
  sbert_ce_default_activation_function?: string;
}

/** Labels of a classification head, as transformers counts them (id2label, else num_labels, else its default of 2). */
export function labelCount(config: ClassifierConfig): number {
  return config.id2label ? Object.keys(config.id2label).length : (config.num_labels ?? 2);
}

/** A one-label `*ForSequenceClassification` head: what a reranker (cross-encoder) export is. */
export function isCrossEncoderConfig(config: ClassifierConfig): boolean {
  const arch = config.architectures?.[0];
  return arch !== undefined && /ForSequenceClassification$/.test(arch) && labelCount(config) === 1;
}

/**
 * The activation CrossEncoder.predict applies to the logit: the one config.json names
 * (sentence-transformers 4's `sentence_transformers.activation_fn`, or the older
 * `sbert_ce_default_activation_function`), else sigmoid for one label. A name Hearth does not
 * know is an error naming it, rather than a score on another scale.
 */
export function readActivation(config: ClassifierConfig): { name: string; fn: (x: number) => number } {
  const name = config.sentence_transformers?.activation_fn ?? config.sbert_ce_default_activation_function ?? 'torch.nn.modules.activation.Sigmoid';
  const fn = ACTIVATIONS[name];
  if (!fn) throw new Error(`config.json names the activation ${name}; Hearth applies ${Object.keys(ACTIVATIONS).join(', ')}`);
  return { name, fn };
}
