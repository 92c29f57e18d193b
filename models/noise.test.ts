import { deepStrictEqual, notDeepStrictEqual, ok } from "node:assert/strict";
import { assertThrowsMessage } from "../harness/testing.ts";
import { gaussianNoise } from "./noise.ts";

/** The standard normal CDF (Abramowitz–Stegun 7.1.26 erf, |error| < 1.5e-7). */
function normalCdf(x: number): number {
  const t = 1 / (1 + 0.3275911 * Math.abs(x) / Math.SQRT2);
  const erf = 1 - t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) *
      Math.exp(-(x * x) / 2);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

Deno.test("gaussianNoise: standard normal (moments, Kolmogorov-Smirnov, lag-1 correlation) over 200,000 values", () => {
  const n = 200_000, z = gaussianNoise(7, n);
  let s1 = 0, s2 = 0, s4 = 0, lag = 0;
  for (let i = 0; i < n; i++) {
    s1 += z[i];
    s2 += z[i] ** 2;
    s4 += z[i] ** 4;
    if (i > 0) lag += z[i] * z[i - 1];
  }
  const mean = s1 / n, variance = s2 / n - mean * mean;
  // Standard errors at n = 200,000: mean 0.0022, variance 0.0032, fourth moment 0.023, lag 0.0022.
  ok(Math.abs(mean) < 0.01, `mean ${mean}`);
  ok(Math.abs(variance - 1) < 0.015, `variance ${variance}`);
  ok(Math.abs(s4 / n - 3) < 0.1, `fourth moment ${s4 / n}`);
  ok(Math.abs(lag / n) < 0.01, `lag-1 correlation ${lag / n}`);
  const sorted = Float64Array.from(z).sort();
  let ks = 0;
  for (let i = 0; i < n; i++) {
    const f = normalCdf(sorted[i]);
    ks = Math.max(ks, Math.abs(f - i / n), Math.abs(f - (i + 1) / n));
  }
  ok(ks < 1.63 / Math.sqrt(n), `Kolmogorov-Smirnov D ${ks} (1% critical value ${1.63 / Math.sqrt(n)})`); // 0.0036
  ok(z.every((v) => Math.abs(v) < 6.67));
});

Deno.test("gaussianNoise: a function of (seed, index): same seed same values, prefixes and offsets agree", async () => {
  deepStrictEqual(gaussianNoise(1, 1000), gaussianNoise(1, 1000));
  notDeepStrictEqual(gaussianNoise(1, 16), gaussianNoise(2, 16));
  deepStrictEqual(gaussianNoise(3, 10), gaussianNoise(3, 1000).slice(0, 10));
  deepStrictEqual(gaussianNoise(3, 5, 7), gaussianNoise(3, 12).slice(7));
  // Neighbouring seeds are not shifted copies of each other.
  const a = gaussianNoise(10, 4096), b = gaussianNoise(11, 4096);
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i] * b[i];
  ok(Math.abs(dot / a.length) < 0.06, `correlation of seeds 10 and 11: ${dot / a.length}`);
  await assertThrowsMessage(() => gaussianNoise(-1, 4), "seed must be an integer in [0, 2^32), got -1");
  await assertThrowsMessage(() => gaussianNoise(0.5, 4), "seed must be an integer");
  await assertThrowsMessage(() => gaussianNoise(0, 4, 2 ** 32 - 2), "offset + length must be at most 2^32");
});
