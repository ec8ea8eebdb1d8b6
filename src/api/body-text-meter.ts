// How much of a JSON body is text, counted while it streams in: a body may carry its images'
// payloads beyond the body limit (images.ts), but the rest of it is held to that limit, so a
// body of plain text is refused once it passes the limit, not after the image allowance.

const DATA_URL = new TextEncoder().encode('data:image/');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

/**
 * Counts a JSON body's bytes outside its image payloads: strings that start with `data:image/`
 * (chat's and Responses' image URLs) and the string values of `data` keys (Anthropic's base64
 * sources). Fed the body chunk by chunk; it reads JSON's lexical structure only (strings,
 * escapes, the colon after a key), so a body that is not JSON is still counted, byte for byte.
 */
export class BodyTextMeter {
  /** Bytes outside image payloads so far. */
  text = 0;
  private inString = false;
  private escaped = false;
  /** The string being read is an image payload. */
  private payload = false;
  /** Bytes of the current string so far (its first bytes decide whether it is a data: URL). */
  private length = 0;
  /** The current string's first bytes, for a key's name. */
  private head: number[] = [];
  /** The last string read, where it may be a key (its next significant byte decides). */
  private lastString = '';
  private afterString = false;
  /** The key whose value comes next (a string followed by ':'). */
  private key = '';
  private valueExpected = false;

  feed(chunk: Uint8Array): void {
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (this.inString) {
        if (this.payload) {
          if (this.escaped) this.escaped = false;
          else if (b === BACKSLASH) this.escaped = true;
          else if (b === QUOTE) this.endString();
          continue;
        }
        this.text++;
        if (this.escaped) this.escaped = false;
        else if (b === BACKSLASH) this.escaped = true;
        else if (b === QUOTE) {
          this.endString();
          continue;
        }
        if (this.head.length < 16) this.head.push(b);
        // A data:image/ URL: its first bytes, counted as text so far, are the payload's.
        if (this.length < DATA_URL.length && b === DATA_URL[this.length]) {
          this.length++;
          if (this.length === DATA_URL.length) {
            this.payload = true;
            this.text -= DATA_URL.length;
          }
        } else this.length = DATA_URL.length + 1; // no longer a candidate
        continue;
      }
      this.text++;
      if (b === QUOTE) {
        this.startString();
        continue;
      }
      if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) continue;
      if (b === COLON && this.afterString) {
        this.key = this.lastString;
        this.valueExpected = true;
      } else this.valueExpected = false;
      this.afterString = false;
    }
  }

  private startString(): void {
    this.inString = true;
    this.escaped = false;
    this.length = 0;
    this.head = [];
    // Anthropic's base64 source: {"type": "base64", "media_type": …, "data": "<payload>"}.
    this.payload = this.valueExpected && this.key === 'data';
    this.valueExpected = false;
    this.afterString = false;
  }

  private endString(): void {
    if (this.payload) this.text++; // its closing quote is the body's
    this.inString = false;
    this.payload = false;
    this.lastString = String.fromCharCode(...this.head);
    this.afterString = true;
  }
}
