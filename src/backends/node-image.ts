// Images in Node: sharp (libvips), the decoder transformers.js reads images with there, so
// the pixels are the ones its processor sees.
import sharp from 'sharp';
import { ImageTooLarge, type Pixels } from './image.js';

// libvips keeps recent operations and their pixels for reuse (50 MB by default); every request's
// image is another, so the cache would only hold memory.
sharp.cache(false);

/**
 * PNG, JPEG, WebP or a GIF's first frame → 8-bit RGB(A), turned upright by its EXIF orientation
 * (as transformers.js's RawImage.read does). The header's size is checked before the pixels are
 * decoded, so an image over the limit never takes its decoded size in memory.
 */
export async function decodeImageNode(bytes: Uint8Array, maxPixels: number): Promise<Pixels> {
  const image = sharp(bytes, { limitInputPixels: false, failOn: 'error' });
  const meta = await image.metadata();
  if (!meta.width || !meta.height) throw new Error('its header gives no size');
  if (meta.width * meta.height > maxPixels) throw new ImageTooLarge(meta.width, meta.height);
  const { data, info } = await image.rotate().raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
  const pixels = new Uint8Array(data.buffer, data.byteOffset, data.length);
  if (info.channels === 3 || info.channels === 4) return { width: info.width, height: info.height, channels: info.channels, data: pixels };
  // Grey (and grey with alpha): each value copied to red, green and blue, as PIL's convert('RGB') does.
  const alpha = info.channels === 2;
  const out = new Uint8Array(info.width * info.height * (alpha ? 4 : 3));
  for (let i = 0, o = 0; i < pixels.length; i += info.channels) {
    out[o++] = out[o++] = out[o++] = pixels[i]!;
    if (alpha) out[o++] = pixels[i + 1]!;
  }
  return { width: info.width, height: info.height, channels: alpha ? 4 : 3, data: out };
}
