// Resizing of 8-bit interleaved images as sharp's `resize({ width, height, fit: 'fill', kernel:
// 'lanczos3' })` does it (libvips 8.18's vips_resize), in plain TypeScript so it runs in Node and
// in a page alike. transformers.js resizes with exactly that call in Node for resample 1 (PIL's
// LANCZOS), so matching libvips' integer arithmetic here makes Hearth's pixels those of
// transformers.js, not merely close to them.
//
// What vips_resize does, per axis: a downscale is an optional integer box shrink (when the factor
// is at least twice the "gap" of 2) followed by a Lanczos-3 reduce (vertical first, then
// horizontal), each pass rounding to 8 bits; an upscale is not Lanczos at all but vips_affine with
// the Catmull-Rom "bicubic" interpolator, output pixel X sampling input X/scale − 0.5, edges
// extended by copying.

/** An 8-bit image, `channels` values per pixel, rows top to bottom. */
export interface Raster {
  width: number;
  height: number;
  channels: number;
  data: Uint8Array;
}

// libvips' fixed-point constants: masks are tabulated at 1/64 pixel and scaled by 2^12.
const TRANSFORM_SCALE = 64;
const INTERPOLATE_SHIFT = 12;
const INTERPOLATE_SCALE = 1 << INTERPOLATE_SHIFT;
const HALF = INTERPOLATE_SCALE >> 1;

/** C's rint (round half to even), as libvips' mask sizes use it. */
function rint(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** The mask index for a position: round-to-nearest 1/64 of its fractional part, as libvips computes it. */
function maskIndex(x: number): number {
  const sx = Math.trunc(x * TRANSFORM_SCALE * 2);
  return ((sx & (TRANSFORM_SCALE * 2 - 1)) + 1) >> 1;
}

const clip8 = (v: number) => (v < 0 ? 0 : v > 255 ? 255 : v);

function sinc(x: number): number {
  if (x === 0) return 1;
  const px = x * Math.PI;
  return Math.sin(px) / px;
}

const lanczos3 = (x: number) => (x >= -3 && x <= 3 ? sinc(x) * sinc(x / 3) : 0);

/** Catmull-Rom coefficients for a fractional offset, in libvips' formulation (its rounding included). */
function catmull(x: number): number[] {
  const cr1 = 1 - x;
  const cr2 = -0.5 * x;
  const cr3 = cr1 * cr2;
  const cone = cr1 * cr3;
  const cfou = x * cr3;
  const cr4 = cfou - cone;
  const ctwo = cr1 - cone + cr4;
  const cthr = x - cfou - cr4;
  return [cone, ctwo, cthr, cfou];
}

let bicubicTable: Int32Array[] | undefined;
function bicubicMasks(): Int32Array[] {
  bicubicTable ??= Array.from({ length: TRANSFORM_SCALE + 1 }, (_, i) => Int32Array.from(catmull(Math.fround(i / TRANSFORM_SCALE)), (c) => Math.trunc(c * INTERPOLATE_SCALE)));
  return bicubicTable;
}

/** Lanczos-3 reduce masks (libvips' vips_reduce_make_mask), normalised then truncated to shorts. */
function reduceMasks(points: number, shrink: number): Int32Array[] {
  return Array.from({ length: TRANSFORM_SCALE + 1 }, (_, t) => {
    const half = Math.fround(t / TRANSFORM_SCALE) + points / 2 - 1;
    const c = Array.from({ length: points }, (_, i) => lanczos3((i - half) / shrink));
    const sum = c.reduce((s, v) => s + v, 0);
    return Int32Array.from(c, (v) => Math.trunc((v / sum) * INTERPOLATE_SCALE));
  });
}

/** 8-bit pixels, or the unclipped integers between bicubic's two passes. */
interface Samples<T extends Uint8Array | Int32Array = Uint8Array | Int32Array> {
  width: number;
  height: number;
  channels: number;
  data: T;
}

/**
 * One separable pass along an axis: output sample o is finish(Σₖ weights[o·n + k] ·
 * input[taps[o·n + k]]), the taps already clamped to the image (libvips' extend-copy).
 */
function pass<T extends Uint8Array | Int32Array>(src: Samples, vertical: boolean, n: number, taps: Int32Array, weights: Int32Array, finish: (sum: number) => number, out: Samples<T>): Samples<T> {
  const { width, channels, data } = src;
  const outLength = taps.length / n;
  if (vertical) {
    const rowLen = width * channels;
    const acc = new Float64Array(rowLen);
    for (let o = 0; o < outLength; o++) {
      acc.fill(0);
      for (let k = 0; k < n; k++) {
        const w = weights[o * n + k]!;
        if (w === 0) continue;
        const base = taps[o * n + k]! * rowLen;
        for (let i = 0; i < rowLen; i++) acc[i]! += w * data[base + i]!;
      }
      const outBase = o * rowLen;
      for (let i = 0; i < rowLen; i++) out.data[outBase + i] = finish(acc[i]!);
    }
  } else {
    for (let y = 0; y < src.height; y++) {
      const inBase = y * width * channels;
      const outBase = y * outLength * channels;
      for (let o = 0; o < outLength; o++) {
        const t0 = o * n;
        for (let c = 0; c < channels; c++) {
          let sum = 0;
          for (let k = 0; k < n; k++) sum += weights[t0 + k]! * data[inBase + taps[t0 + k]! * channels + c]!;
          out.data[outBase + o * channels + c] = finish(sum);
        }
      }
    }
  }
  return out;
}

function raster(src: Samples, vertical: boolean, length: number): Raster {
  const width = vertical ? src.width : length;
  const height = vertical ? length : src.height;
  return { width, height, channels: src.channels, data: new Uint8Array(width * height * src.channels) };
}

/** (v + 2^11) >> 12 on a C int: an arithmetic shift, so floor for negative sums too. */
const fixedRound = (v: number) => (v + HALF) >> INTERPOLATE_SHIFT;
const fixedRound8 = (v: number) => clip8((v + HALF) >> INTERPOLATE_SHIFT);

/** vips_shrinkh / vips_shrinkv with `ceil`: box averages of `n` samples, the last block edge-extended. */
function boxShrink(img: Raster, n: number, vertical: boolean): Raster {
  const inLength = vertical ? img.height : img.width;
  const outLength = Math.ceil(inLength / n);
  const taps = Int32Array.from({ length: outLength * n }, (_, t) => Math.min(t, inLength - 1));
  const amend = n >> 1;
  const multiplier = Math.floor(2 ** 24 / n);
  return pass(img, vertical, n, taps, new Int32Array(taps.length).fill(1), (sum) => Math.floor(((sum + amend) * multiplier) / 2 ** 24), raster(img, vertical, outLength));
}

/** vips_reducev / vips_reduceh with the Lanczos-3 kernel and libvips' default gap of 2. */
function reduce(img: Raster, shrink: number, vertical: boolean, gap = 2): Raster {
  const inLength = vertical ? img.height : img.width;
  const outLength = Math.floor(inLength / shrink + 0.5);
  let extra = outLength * shrink - inLength;
  let residual = shrink;
  const intShrink = Math.max(1, Math.floor(inLength / outLength / gap));
  if (intShrink > 1) {
    img = boxShrink(img, intShrink, vertical);
    residual /= intShrink;
    extra /= intShrink;
  }
  if (residual === 1) return img;
  const points = 2 * rint(3 * residual) + 1;
  const offset = (1 + extra) / 2 - 1;
  const masks = reduceMasks(points, residual);
  const lead = Math.ceil(points / 2) - 1;
  const last = (vertical ? img.height : img.width) - 1;
  const taps = new Int32Array(outLength * points);
  const weights = new Int32Array(outLength * points);
  for (let o = 0; o < outLength; o++) {
    const X = (o + 0.5) * residual - 0.5 - offset;
    const first = Math.trunc(X) - lead;
    weights.set(masks[maskIndex(X)]!, o * points);
    for (let i = 0; i < points; i++) taps[o * points + i] = Math.min(Math.max(first + i, 0), last);
  }
  return pass(img, vertical, points, taps, weights, fixedRound8, raster(img, vertical, outLength));
}

/**
 * vips_affine with a diagonal matrix, the bicubic interpolator and extend-copy, as vips_resize
 * calls it to enlarge: output pixel (X, Y) samples input (X/hscale − idx, Y/vscale − idy).
 * libvips rounds each row's horizontal sum to an (unclipped) integer before the vertical one,
 * which is what doing it in two passes gives.
 */
function affineBicubic(img: Raster, hscale: number, vscale: number, idx: number, idy: number, width: number, height: number, extend: 'copy' | 'black' = 'copy'): Raster {
  const masks = bicubicMasks();
  // vips' own arithmetic, operation for operation: the sample positions land on mask-table
  // boundaries often enough (65/256 is exact in binary) that a different rounding picks the
  // neighbouring mask. The inverse matrix is 1/det times the swapped diagonal; a row's x starts
  // at output 0 and steps by ia; positions are in vips' embedded space, two pixels in from the
  // real image's corner, where they are always positive.
  const tmp = 1 / (hscale * vscale);
  const ia = tmp * vscale;
  const id = tmp * hscale;
  const xs = new Float64Array(width);
  for (let X = 0, x = 1 - (idx - 1); X < width; X++, x += ia) xs[X] = x;
  const ys = Float64Array.from({ length: height }, (_, Y) => id * Y - (idy - 1) + 1);
  const stencil = (positions: Float64Array, size: number) => {
    const taps = new Int32Array(positions.length * 4);
    const weights = new Int32Array(positions.length * 4);
    positions.forEach((p, o) => {
      const ip = Math.trunc(p);
      weights.set(masks[maskIndex(p)]!, o * 4);
      for (let j = 0; j < 4; j++) {
        const tap = ip - 1 + j - 2;
        taps[o * 4 + j] = Math.min(Math.max(tap, 0), size - 1);
        // Outside the image: the edge pixel copied, or black (its weight then counts for nothing).
        if (extend === 'black' && (tap < 0 || tap >= size)) weights[o * 4 + j] = 0;
      }
    });
    return { taps, weights };
  };
  const h = stencil(xs, img.width);
  const v = stencil(ys, img.height);
  const rows = pass(img, false, 4, h.taps, h.weights, fixedRound, { width, height: img.height, channels: img.channels, data: new Int32Array(width * img.height * img.channels) });
  return pass(rows, true, 4, v.taps, v.weights, fixedRound8, { width, height, channels: img.channels, data: new Uint8Array(width * height * img.channels) });
}

/**
 * Resize to exactly `width` × `height` as sharp's `resize({ fit: 'fill', kernel: 'lanczos3' })`
 * on a raw 8-bit image without alpha (libvips 8.18's vips_resize).
 */
export function resizeLanczos3(img: Raster, width: number, height: number): Raster {
  if (img.width === width && img.height === height) return img;
  // sharp passes scale = 1 / (in / target) per axis.
  let hscale = 1 / (img.width / width);
  let vscale = 1 / (img.height / height);
  hscale = Math.max(hscale, 1 / img.width);
  vscale = Math.max(vscale, 1 / img.height);
  let out = img;
  if (vscale < 1) out = reduce(out, 1 / vscale, true);
  if (hscale < 1) out = reduce(out, 1 / hscale, false);
  if (hscale > 1 || vscale > 1) {
    // libvips 8.18 displaces the input by half a pixel on both axes whatever the scale (the
    // scale-dependent centre offset came after it), so an axis left at scale 1 is shifted too.
    const idx = 0.5;
    const idy = 0.5;
    if (hscale > 1 && vscale > 1) out = affineBicubic(out, hscale, vscale, idx, idy, width, height);
    else if (hscale > 1) out = affineBicubic(out, hscale, 1, idx, idy, width, out.height);
    else out = affineBicubic(out, 1, vscale, idx, idy, out.width, height);
  }
  return out;
}

/**
 * Resize to exactly `width` × `height` as sharp's `affine([width / w, 0, 0, height / h], {
 * interpolator: 'bicubic' })` does it, which is how transformers.js resizes in Node for resample 3
 * (PIL's BICUBIC): output pixel X samples input X·w/width with Catmull-Rom weights, no
 * antialiasing when it shrinks, and the background (black) past the edges.
 */
export function resizeBicubic(img: Raster, width: number, height: number): Raster {
  if (img.width === width && img.height === height) return img;
  return affineBicubic(img, width / img.width, height / img.height, 0, 0, width, height, 'black');
}
