// The audio track of a WebM (Matroska) file: its codec, codec private data and frames. Browsers'
// MediaRecorder writes WebM/Opus, the usual upload from a microphone. audiojs's @audio/decode-webm
// would do this too, but it depends on every codec it might meet (AC-3 and DTS among them, under
// the GPL), which a page's bundler would then emit; reading the few elements an audio track
// needs is a small job, so it is done here and the frames go to the Opus decoder.
//
// Matroska is EBML: each element is an ID (a variable-length integer keeping its marker bits), a
// size (one with them cleared; all ones means unknown), then the body. Recorders stream, so the
// Segment and each Cluster often have an unknown size: the reader therefore walks the file
// linearly, stepping into the master elements it needs whatever their size and skipping the rest.

export interface WebmAudioTrack {
  codecId: string;
  codecPrivate: Uint8Array | null;
  /** The frames of the track, in file order. */
  frames: Uint8Array[];
  /** Nanoseconds to drop from the end (DiscardPadding of the last blocks). */
  discardPaddingNs: number;
}

const SEGMENT = 0x18538067;
const CLUSTER = 0x1f43b675;
const TRACKS = 0x1654ae6b;
const TRACK_ENTRY = 0xae;
const TRACK_NUMBER = 0xd7;
const TRACK_TYPE = 0x83;
const CODEC_ID = 0x86;
const CODEC_PRIVATE = 0x63a2;
const BLOCK_GROUP = 0xa0;
const BLOCK = 0xa1;
const SIMPLE_BLOCK = 0xa3;
const DISCARD_PADDING = 0x75a2;
const AUDIO_TRACK = 2;

/** Elements stepped into rather than skipped. */
const MASTERS = new Set([SEGMENT, CLUSTER, TRACKS, TRACK_ENTRY, BLOCK_GROUP]);

interface Vint {
  value: number;
  length: number;
  unknown: boolean;
}

/** A variable-length integer at `at`, or null when the bytes end or its first byte is 0. */
function readVint(bytes: Uint8Array, at: number, keepMarker: boolean): Vint | null {
  const first = bytes[at];
  if (first === undefined || first === 0) return null;
  const length = Math.clz32(first) - 23;
  if (at + length > bytes.length) return null;
  let value = keepMarker ? first : first & (0xff >> length);
  let allOnes = value === 0xff >> length;
  for (let i = 1; i < length; i++) {
    const b = bytes[at + i]!;
    value = value * 256 + b;
    if (b !== 0xff) allOnes = false;
  }
  return { value, length, unknown: !keepMarker && allOnes };
}

function readUint(body: Uint8Array): number {
  let v = 0;
  for (const b of body) v = v * 256 + b;
  return v;
}

function readInt(body: Uint8Array): number {
  const u = readUint(body);
  return body.length && body[0]! & 0x80 ? u - 2 ** (8 * body.length) : u;
}

interface Track {
  number: number;
  type: number;
  codecId: string;
  codecPrivate: Uint8Array | null;
}

/**
 * The first audio track of a WebM file with its frames, or null when the file has none. Throws
 * on a file whose structure cannot be read at all (an element running past the end is taken as
 * truncation: what came before it is kept).
 */
export function demuxWebmAudio(bytes: Uint8Array): WebmAudioTrack | null {
  const tracks: Track[] = [];
  let entry: Track | null = null;
  const blocks: { track: number; frames: Uint8Array[]; padding: number }[] = [];
  let groupPadding = 0;
  let groupBlock: { track: number; frames: Uint8Array[]; padding: number } | null = null;

  let at = 0;
  while (at < bytes.length) {
    const id = readVint(bytes, at, true);
    if (!id) break;
    const size = readVint(bytes, at + id.length, false);
    if (!size) break;
    const bodyAt = at + id.length + size.length;
    if (MASTERS.has(id.value)) {
      if (id.value === TRACK_ENTRY) {
        entry = { number: 0, type: 0, codecId: '', codecPrivate: null };
        tracks.push(entry);
      }
      if (id.value === BLOCK_GROUP) {
        groupPadding = 0;
        groupBlock = null;
      }
      at = bodyAt;
      continue;
    }
    if (size.unknown || bodyAt + size.value > bytes.length) break;
    const body = bytes.subarray(bodyAt, bodyAt + size.value);
    at = bodyAt + size.value;
    switch (id.value) {
      case TRACK_NUMBER:
        if (entry) entry.number = readUint(body);
        break;
      case TRACK_TYPE:
        if (entry) entry.type = readUint(body);
        break;
      case CODEC_ID:
        if (entry) entry.codecId = new TextDecoder().decode(body).replace(/\0+$/, '');
        break;
      case CODEC_PRIVATE:
        if (entry) entry.codecPrivate = body;
        break;
      case SIMPLE_BLOCK:
      case BLOCK: {
        const block = readBlock(body);
        if (!block) break;
        const item = { ...block, padding: 0 };
        blocks.push(item);
        if (id.value === BLOCK) {
          groupBlock = item;
          item.padding = groupPadding;
        }
        break;
      }
      case DISCARD_PADDING:
        groupPadding = readInt(body);
        if (groupBlock) groupBlock.padding = groupPadding;
        break;
    }
  }

  const audio = tracks.find((t) => t.type === AUDIO_TRACK);
  if (!audio) return null;
  const number = audio.number;
  const own = blocks.filter((b) => b.track === number);
  return {
    codecId: audio.codecId,
    codecPrivate: audio.codecPrivate,
    frames: own.flatMap((b) => b.frames),
    discardPaddingNs: own.reduce((sum, b) => sum + Math.max(0, b.padding), 0),
  };
}

/** A Block's track number and frames (lacing undone), or null when it is malformed. */
function readBlock(body: Uint8Array): { track: number; frames: Uint8Array[] } | null {
  const track = readVint(body, 0, false);
  if (!track || body.length < track.length + 3) return null;
  const flags = body[track.length + 2]!;
  let at = track.length + 3;
  const lacing = (flags >> 1) & 3;
  if (lacing === 0) return { track: track.value, frames: [body.subarray(at)] };

  const count = body[at++]! + 1;
  const sizes: number[] = [];
  if (lacing === 1) {
    // Xiph lacing: each size but the last as a run of bytes summed, 255 meaning "more".
    for (let i = 0; i < count - 1; i++) {
      let size = 0;
      let b: number | undefined;
      do {
        b = body[at++];
        if (b === undefined) return null;
        size += b;
      } while (b === 255);
      sizes.push(size);
    }
  } else if (lacing === 3) {
    // EBML lacing: the first size, then signed differences to the previous one.
    const first = readVint(body, at, false);
    if (!first) return null;
    at += first.length;
    sizes.push(first.value);
    for (let i = 1; i < count - 1; i++) {
      const diff = readVint(body, at, false);
      if (!diff) return null;
      at += diff.length;
      sizes.push(sizes[i - 1]! + diff.value - (2 ** (7 * diff.length - 1) - 1));
    }
  } else {
    const each = Math.floor((body.length - at) / count);
    for (let i = 0; i < count - 1; i++) sizes.push(each);
  }
  const rest = body.length - at - sizes.reduce((a, b) => a + b, 0);
  if (rest < 0 || sizes.some((s) => s < 0)) return null;
  sizes.push(rest);
  const frames: Uint8Array[] = [];
  for (const size of sizes) {
    frames.push(body.subarray(at, at + size));
    at += size;
  }
  return { track: track.value, frames };
}
