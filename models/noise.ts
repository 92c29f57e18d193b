/**
 * Seeded Gaussian noise for diffusion models: the same values for the same seed on every platform
 * that runs JavaScript, independent of any framework's generator (torch's `randn` cannot be
 * reproduced outside torch, so a port cannot match a torch image bit for bit from a seed; it can be
 * reproducible on its own terms, which this is).
 *
 * The generator is counter-based, so element i depends only on (seed, i):
 *
 * ```
 * fmix32(x)   = MurmurHash3's finaliser: x ^= x >>> 16; x *= 0x85EBCA6B; x ^= x >>> 13; x *= 0xC2B2AE35; x ^= x >>> 16
 * key         = fmix32(seed ^ 0x9E3779B9)
 * bits(c)     = fmix32(fmix32((c · 0x9E3779B9 + key) mod 2^32) ^ 0x6A09E667)         c = 0, 1, ..., 2^32 − 1
 * u1 = (bits(2j) + 1) / 2^32 ∈ (0, 1],   u2 = bits(2j + 1) / 2^32 ∈ [0, 1)
 * z_2j = sqrt(−2 ln u1) · cos(2π u2),    z_2j+1 = sqrt(−2 ln u1) · sin(2π u2)       (Box–Muller)
 * ```
 *
 * each z rounded once to float32. The integer part is exact everywhere; `Math.log`, `Math.cos` and
 * `Math.sin` are not correctly rounded by the language, so two engines may, rarely, differ in the
 * last float32 bit of a value (V8, which Deno and Chromium share, gives the same bits everywhere).
 * |z| stays below sqrt(2 · 32 · ln 2) ≈ 6.66.
 *
 * @module
 */

function fmix32(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/**
 * `length` standard normal values for `seed`, starting at element `offset` of its sequence.
 *
 * @param seed an integer in [0, 2^32)
 * @param length how many values, an integer >= 0
 * @param offset the first element's index in the seed's sequence (default 0), an integer >= 0
 * @returns the values, float32
 * @throws Error naming seed, length or offset when out of range (the sequence has 2^32 elements)
 *
 * @example
 * ```ts
 * import { gaussianNoise } from "@xpu/ops/models/noise";
 * const latent = gaussianNoise(42, 16 * 128 * 128); // a 1024 x 1024 image's latent
 * gaussianNoise(42, 4, 2)[0] === latent[2]; // true: element i depends on (seed, i) only
 * ```
 */
export function gaussianNoise(seed: number, length: number, offset = 0): Float32Array {
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new Error(`gaussianNoise: seed must be an integer in [0, 2^32), got ${seed}`);
  }
  if (!Number.isInteger(length) || length < 0 || !Number.isInteger(offset) || offset < 0) {
    throw new Error(`gaussianNoise: length and offset must be integers >= 0, got ${length} and ${offset}`);
  }
  if (offset + length > 2 ** 32) {
    throw new Error(`gaussianNoise: offset + length must be at most 2^32, got ${offset + length}`);
  }
  const key = fmix32((seed ^ 0x9e3779b9) >>> 0);
  const bits = (c: number) => fmix32((fmix32((Math.imul(c, 0x9e3779b9) + key) >>> 0) ^ 0x6a09e667) >>> 0);
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) {
    const e = offset + i, j = e >>> 1;
    const u1 = (bits(2 * j) + 1) / 2 ** 32, u2 = bits(2 * j + 1) / 2 ** 32;
    const r = Math.sqrt(-2 * Math.log(u1)), theta = 2 * Math.PI * u2;
    out[i] = e % 2 === 0 ? r * Math.cos(theta) : r * Math.sin(theta);
  }
  return out;
}
