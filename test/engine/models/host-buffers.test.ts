// Freeing onnxruntime's output buffers once the engine is done with them (host-buffers.ts).
import { describe, expect, it } from 'vitest';
import { freeHostBuffers } from '../../../src/engine/models/host-buffers.js';

describe('freeing host buffers', () => {
  it('detaches an array that owns its whole buffer, so its memory goes at once', () => {
    const kv = new Uint16Array(1024);
    freeHostBuffers([kv]);
    expect(kv.buffer.byteLength).toBe(0);
    expect(kv.length).toBe(0);
  });

  it('leaves a view of a larger buffer alone, since other views may read it', () => {
    const whole = new Float32Array(64).fill(1);
    const view = whole.subarray(16, 32);
    freeHostBuffers([view]);
    expect(whole.buffer.byteLength).toBe(256);
    expect(whole[20]).toBe(1);
  });

  it('leaves a SharedArrayBuffer alone, and takes an already freed array or none', () => {
    const shared = new Float32Array(new SharedArrayBuffer(64));
    const kv = new Float32Array(8);
    freeHostBuffers([shared, kv]);
    freeHostBuffers([kv]);
    freeHostBuffers(null);
    expect(shared.length).toBe(16);
    expect(kv.length).toBe(0);
  });
});
