// The operator types an ONNX file's graph uses, read from the file itself: onnxruntime's
// session exposes only the graph's inputs and outputs, yet how a batch's KV cache must be
// laid out depends on the attention op inside (GroupQueryAttention reads each row's cache
// as a prefix). The scan walks the protobuf fields (ModelProto.graph → GraphProto.node →
// NodeProto.op_type, and subgraphs in node attributes) and jumps over everything else: it
// reads the nodes and the headers of other fields, never the weights.

import type { Backend } from '../../backends/types.js';

/** `length` bytes of the file from `offset` (fewer at its end). */
export type RangeReader = (offset: number, length: number) => Promise<Uint8Array>;

const CHUNK = 16 * 1024;

/** A forward cursor over a file read in chunks; skipping never reads. */
class Cursor {
  private buf: Uint8Array = new Uint8Array(0);
  private bufStart = 0;
  pos = 0;

  constructor(private readonly read: RangeReader) {}

  private async byte(): Promise<number> {
    const at = this.pos - this.bufStart;
    if (at < 0 || at >= this.buf.length) {
      this.buf = await this.read(this.pos, CHUNK);
      this.bufStart = this.pos;
      if (this.buf.length === 0) throw new Error('unexpected end of the ONNX file');
    }
    this.pos++;
    return this.buf[this.pos - 1 - this.bufStart]!;
  }

  /** A varint as a number (lengths and offsets stay far below 2^53). */
  async varint(): Promise<number> {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const b = await this.byte();
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
    throw new Error('malformed varint in the ONNX file');
  }

  async bytes(n: number): Promise<Uint8Array> {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = await this.byte();
    return out;
  }
}

/** Calls `onField` for each length-delimited field of the message spanning [cursor.pos, end); the cursor then moves past the field, whatever it read. */
async function fields(c: Cursor, end: number, onField: (field: number, length: number) => Promise<void>): Promise<void> {
  while (c.pos < end) {
    const tag = await c.varint();
    const wire = tag % 8;
    if (wire === 0) await c.varint();
    else if (wire === 1) c.pos += 8;
    else if (wire === 5) c.pos += 4;
    else if (wire === 2) {
      const length = await c.varint();
      const start = c.pos;
      await onField(Math.floor(tag / 8), length);
      c.pos = start + length;
    } else throw new Error(`unsupported protobuf wire type ${wire} in the ONNX file`);
  }
}

// Field numbers of onnx.proto.
const MODEL_GRAPH = 7;
const GRAPH_NODE = 1;
const NODE_OP_TYPE = 4;
const NODE_ATTRIBUTE = 5;
const ATTRIBUTE_GRAPH = 6;
const ATTRIBUTE_GRAPHS = 11;

async function scanGraph(c: Cursor, end: number, ops: Set<string>): Promise<void> {
  await fields(c, end, async (field, length) => {
    if (field !== GRAPH_NODE) return;
    await fields(c, c.pos + length, async (f, len) => {
      if (f === NODE_OP_TYPE) ops.add(new TextDecoder().decode(await c.bytes(len)));
      if (f !== NODE_ATTRIBUTE) return;
      await fields(c, c.pos + len, async (a, alen) => {
        if (a === ATTRIBUTE_GRAPH || a === ATTRIBUTE_GRAPHS) await scanGraph(c, c.pos + alen, ops);
      });
    });
  });
}

/** Every op type in the graph (and subgraphs) of the ONNX file of `size` bytes that `read` reads. */
export async function graphOpTypes(read: RangeReader, size: number): Promise<Set<string>> {
  const ops = new Set<string>();
  const c = new Cursor(read);
  await fields(c, size, async (field, length) => {
    if (field === MODEL_GRAPH) await scanGraph(c, c.pos + length, ops);
  });
  return ops;
}

/** The op types of the ONNX file at `path`; empty where the backend cannot read part of a file. */
export async function readGraphOps(backend: Pick<Backend, 'readRange' | 'fileSize'>, path: string): Promise<Set<string>> {
  const size = backend.readRange ? await backend.fileSize?.(path) : undefined;
  if (!size) return new Set();
  return graphOpTypes((offset, length) => backend.readRange!(path, offset, length), size);
}
