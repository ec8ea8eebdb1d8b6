// What config.json says of a classification head (src/engine/models/classifier-head.ts): a
// reranker is a one-label *ForSequenceClassification, and its score's activation is the one
// sentence-transformers' CrossEncoder would apply.
import { describe, expect, it } from 'vitest';
import { isCrossEncoderConfig, labelCount, readActivation } from '../../../src/engine/models/classifier-head.js';

describe('a classification head in config.json', () => {
  it('is a cross-encoder with one label, counted as transformers counts them', () => {
    expect(isCrossEncoderConfig({ architectures: ['BertForSequenceClassification'], id2label: { '0': 'LABEL_0' } })).toBe(true);
    expect(isCrossEncoderConfig({ architectures: ['XLMRobertaForSequenceClassification'], num_labels: 1 })).toBe(true);
    // An NLI cross-encoder (three labels), a head-less encoder, and transformers' default of two labels.
    expect(isCrossEncoderConfig({ architectures: ['DebertaV2ForSequenceClassification'], id2label: { '0': 'a', '1': 'b', '2': 'c' } })).toBe(false);
    expect(isCrossEncoderConfig({ architectures: ['BertModel'], id2label: { '0': 'LABEL_0' } })).toBe(false);
    expect(labelCount({ architectures: ['BertForSequenceClassification'] })).toBe(2);
  });

  it('scores with the activation the config names, sentence-transformers 4’s key first, else sigmoid', () => {
    expect(readActivation({ sbert_ce_default_activation_function: 'torch.nn.modules.linear.Identity' }).fn(3.5)).toBe(3.5);
    expect(readActivation({}).fn(0)).toBe(0.5);
    expect(readActivation({}).fn(2)).toBeCloseTo(1 / (1 + Math.exp(-2)), 12);
    const both = { sentence_transformers: { activation_fn: 'torch.nn.modules.activation.Tanh' }, sbert_ce_default_activation_function: 'torch.nn.modules.linear.Identity' };
    expect(readActivation(both)).toMatchObject({ name: 'torch.nn.modules.activation.Tanh' });
    expect(() => readActivation({ sbert_ce_default_activation_function: 'my.module.Custom' })).toThrow(/my\.module\.Custom.*Identity, .*Sigmoid, .*Tanh/);
  });
});
