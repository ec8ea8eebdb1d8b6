// What a runtime's image decoder gives the engine (vision-language models), and what it throws
// for an image over the pixel limit.

/** An 8-bit image, RGB or RGBA interleaved, rows top to bottom. */
export interface Pixels {
  width: number;
  height: number;
  channels: 3 | 4;
  data: Uint8Array | Uint8ClampedArray;
}

/** Turns an image's encoded bytes into pixels; throws an ImageTooLarge for one over `maxPixels`, before decoding it where it can. */
export type ImageDecoder = (bytes: Uint8Array, maxPixels: number) => Promise<Pixels>;

/** What a decoder throws for an image whose size is over the pixel limit. */
export class ImageTooLarge extends Error {
  override readonly name = 'ImageTooLarge';
  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    super(`the image is ${width}×${height} pixels`);
  }
}
