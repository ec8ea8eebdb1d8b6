// What every image processor does first and last to an 8-bit image, as transformers.js's
// ImageProcessor does it: alpha dropped (do_convert_rgb), then rescaled and normalised into
// float32 planes, channels first.
import type { Pixels } from '../../backends/image.js';
import type { Raster } from './resize.js';

/** A float image, channels first. */
export interface Planes {
  channels: number;
  height: number;
  width: number;
  data: Float32Array;
}

/** The decoded image as 8-bit RGB; `processor` names the caller in errors. */
export function rgbRaster(pixels: Pixels, convertRgb: boolean, processor: string): Raster {
  let img: Raster = { width: pixels.width, height: pixels.height, channels: pixels.channels, data: pixels.data instanceof Uint8Array ? pixels.data : new Uint8Array(pixels.data.buffer, pixels.data.byteOffset, pixels.data.length) };
  if (img.data.length !== img.width * img.height * img.channels) throw new Error(`${processor}: ${img.width}×${img.height}×${img.channels} image with ${img.data.length} bytes`);
  if (img.channels === 4) {
    // transformers.js drops alpha without compositing; without do_convert_rgb it would go on to
    // fail normalising four channels, so there is nothing to match.
    if (!convertRgb) throw new Error(`${processor}: an RGBA image needs do_convert_rgb`);
    const rgb = new Uint8Array(img.width * img.height * 3);
    for (let i = 0, j = 0; j < rgb.length; i += 4, j += 3) {
      rgb[j] = img.data[i]!;
      rgb[j + 1] = img.data[i + 1]!;
      rgb[j + 2] = img.data[i + 2]!;
    }
    img = { ...img, channels: 3, data: rgb };
  }
  return img;
}

export interface PixelScaling {
  doRescale: boolean;
  rescaleFactor: number;
  doNormalize: boolean;
  imageMean: number[];
  imageStd: number[];
}

/** Rescaled and normalised float32 planes of an RGB raster. */
export function normalisedPlanes(img: Raster, s: PixelScaling): Planes {
  const { width, height } = img;
  const plane = width * height;
  const out = new Float32Array(3 * plane);
  const hwc = new Float32Array(1);
  for (let i = 0; i < plane; i++) {
    for (let c = 0; c < 3; c++) {
      // Each step stored as float32 in between, as transformers.js's Float32Array passes.
      hwc[0] = img.data[i * 3 + c]!;
      if (s.doRescale) hwc[0] = s.rescaleFactor * hwc[0]!;
      if (s.doNormalize) hwc[0] = (hwc[0]! - s.imageMean[c]!) / s.imageStd[c]!;
      out[c * plane + i] = hwc[0]!;
    }
  }
  return { channels: 3, height, width, data: out };
}
