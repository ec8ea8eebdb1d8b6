// Which checkpoints think, from their files, and where a reply starts, from the rendered prompt.
import { describe, expect, it } from 'vitest';
import { thinkingStart, writesThinking } from '../../../src/engine/thinking/index.js';

describe('think tags in the files', () => {
  it('mark a reasoning model when both are tokens and the template writes one of them', () => {
    expect(writesThinking(['<|im_end|>', '<think>', '</think>'], "{{- '<|im_start|>assistant\\n<think>\\n' }}")).toBe(true);
    expect(writesThinking(['<think>', '</think>'], "{%- if '</think>' in message.content %}")).toBe(true);
  });

  it('do not, when the vocabulary lacks a tag or the template never writes them', () => {
    expect(writesThinking(['<|im_end|>'], "{{- '<think>\\n\\n</think>\\n' }}")).toBe(false);
    expect(writesThinking(['<think>', '</think>'], '{{ messages[0].content }}')).toBe(false);
  });
});

describe('where a reply starts', () => {
  it('is inside a block the prompt opened, whitespace after the tag or not', () => {
    expect(thinkingStart('<|im_start|>assistant\n<think>\n')).toBe('inside');
    expect(thinkingStart('<｜Assistant｜><think>')).toBe('inside');
  });

  it('is after a block the prompt closed (thinking switched off)', () => {
    expect(thinkingStart('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe('after');
  });

  it('is free to open a block otherwise, whatever earlier turns held', () => {
    expect(thinkingStart('<|im_start|>assistant\n<think>\nx\n</think>\n\nHi<|im_end|>\n<|im_start|>assistant\n')).toBe('free');
  });
});
