/**
 * `deno task roofline`: the roofline probes alone (`--sweep` tries every probe configuration).
 * Deno-only CLI, kept apart from `harness/roofline.ts` so the published probes import no CLI.
 *
 * @module
 */

import { exitWith, rooflineMain } from "./bench.ts";

if (import.meta.main) await exitWith(rooflineMain, Deno.args);
