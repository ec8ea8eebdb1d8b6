// Images in a page (or its worker): the browser's own decoders.
import { ImageTooLarge, type Pixels } from './image.js';

/**
 * PNG, JPEG, WebP or a GIF's first frame → 8-bit RGBA through createImageBitmap and an
 * OffscreenCanvas, without premultiplying alpha or converting colour spaces (the pixels as
 * stored, as sharp gives them in Node). The browser decodes before the size is known, so the
 * pixel limit is checked on the bitmap.
 */
export async function decodeImageWeb(bytes: Uint8Array, maxPixels: number): Promise<Pixels> {
  const bitmap = await createImageBitmap(new Blob([bytes as BlobPart]), { premultiplyAlpha: 'none', colorSpaceConversion: 'none' });
  try {
    const { width, height } = bitmap;
    if (width * height > maxPixels) throw new ImageTooLarge(width, height);
    const canvas = new OffscreenCanvas(width, height);
    const context = canvas.getContext('2d');
    if (!context) throw new Error('no 2D canvas to read the image with');
    context.drawImage(bitmap, 0, 0);
    return { width, height, channels: 4, data: context.getImageData(0, 0, width, height).data };
  } finally {
    bitmap.close();
  }
}
