// GPT-2's byte-level BPE writes each byte as a printable character. These tables
// undo that, so a token's raw bytes (for logprobs and for streaming UTF-8 that is
// split across tokens) come straight from its vocabulary string.

let unicodeToByte: Map<string, number> | undefined;

export function byteLevelDecoder(): Map<string, number> {
  if (unicodeToByte) return unicodeToByte;
  const bs: number[] = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  unicodeToByte = new Map(bs.map((b, i) => [String.fromCharCode(cs[i]), b]));
  return unicodeToByte;
}

export function byteLevelTokenBytes(token: string): Uint8Array {
  const table = byteLevelDecoder();
  const out = new Uint8Array(token.length);
  let n = 0;
  for (const ch of token) {
    const b = table.get(ch);
    if (b === undefined) return new TextEncoder().encode(token); // not a byte-level token
    out[n++] = b;
  }
  return out.subarray(0, n);
}
