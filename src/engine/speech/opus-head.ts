// The Opus identification header (RFC 7845 §5.1), which WebM carries as the track's
// CodecPrivate: the channel layout, and the pre-skip and gain that libopus applies.

export interface OpusHead {
  channels: number;
  preSkip: number;
  outputGain: number;
  streamCount: number;
  coupledStreamCount: number;
  channelMappingTable: number[];
}

export function parseOpusHead(bytes: Uint8Array): OpusHead | null {
  if (bytes.length < 19 || new TextDecoder().decode(bytes.subarray(0, 8)) !== 'OpusHead') return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const channels = bytes[9]!;
  if (channels === 0) return null;
  const preSkip = view.getUint16(10, true);
  const outputGain = view.getInt16(16, true);
  const family = bytes[18]!;
  if (family === 0) {
    if (channels > 2) return null;
    return { channels, preSkip, outputGain, streamCount: 1, coupledStreamCount: channels - 1, channelMappingTable: channels === 1 ? [0] : [0, 1] };
  }
  if (bytes.length < 21 + channels) return null;
  return {
    channels,
    preSkip,
    outputGain,
    streamCount: bytes[19]!,
    coupledStreamCount: bytes[20]!,
    channelMappingTable: Array.from(bytes.subarray(21, 21 + channels)),
  };
}
