/**
 * The hostile-caller battery's bookkeeping (a test helper, not published): a trial is one call with what it
 * must do (be refused, be accepted, or either), and {@link attempt} sorts what it did into one outcome:
 *
 * - `clear`: refused with an Error (never a TypeError, RangeError or ReferenceError from inside) whose
 *   message names the argument (or option key) bent and says what was expected;
 * - `vague`: refused with such an Error that does not name the argument or say what was expected;
 * - `crash`: anything else thrown (a raw TypeError, a non-Error);
 * - `hang`: no answer within the trial's time;
 * - `silent`: a call that had to be refused returned, or an accepted call returned a wrong answer;
 * - `refused`: a valid call was refused;
 * - `ok`: a call that may be accepted returned (its answer checked where the trial can).
 *
 * {@link Tally} counts outcomes per family and keeps every finding that is not `clear` or `ok`.
 *
 * @module
 */

/** What a trial did. */
export type Outcome = "clear" | "vague" | "crash" | "hang" | "silent" | "refused" | "ok";

/** The outcomes in the order a summary lists them. */
export const OUTCOMES: readonly Outcome[] = ["clear", "vague", "crash", "hang", "silent", "refused", "ok"];

/** One call of the battery. */
export interface Trial {
  /** The family it belongs to (e.g. `device`, `fields`), for the summary. */
  family: string;
  /** The call as a reader would write it, for findings. */
  label: string;
  /** Whether the call must be refused, must be accepted, or may be either. */
  expect: "refuse" | "accept" | "either";
  /** The names a refusal may name (the argument bent, its option key); any of them makes it clear. */
  names?: readonly string[];
  /** An error type that is a clear refusal whatever its message says (DeviceLostError, LimitError). */
  clearAs?: readonly (new (...args: never[]) => Error)[];
  /** The call. */
  run: () => unknown;
  /** For a returned value: a description of what is wrong with it, or undefined when it is right. */
  check?: (value: unknown) => string | undefined | Promise<string | undefined>;
  /** Milliseconds before it counts as a hang (default {@link HANG_MS}). */
  timeoutMs?: number;
}

/**
 * How long a call may go unanswered before it counts as a hang: a bound for a call that never answers,
 * not a speed limit. A GPU call on the software adapter of a loaded 2-core machine (pipelines compiled
 * while other processes hold the cores) can take many times its idle time, and no call of a passing run
 * comes near this, so the bound costs a passing run nothing.
 */
export const HANG_MS = 120_000;

/** A trial's outcome, with the message or the reason. */
export interface Finding {
  family: string;
  label: string;
  outcome: Outcome;
  detail: string;
}

/** Words that say what was expected. */
const EXPECTED =
  / must | must$|expected|expects| needs | exceed|refused| over | required|unknown |not a |out of range| only | allows | cannot |invalid|is not | no such | truncated|larger than|past the end|too (long|large|many)|is missing|lost|rejected|destroyed|is empty|is NaN|No such file|has no |used after/;

/** Whether `message` names `name` as a word (so `D` is not found in `Dv` or `Float32Array`). */
export function namesWord(message: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[^A-Za-z0-9_])${escaped}([^A-Za-z0-9_]|$)`).test(message);
}

/** Runs one trial within its time and sorts what it did into an {@link Outcome}. */
export async function attempt(trial: Trial): Promise<Finding> {
  const found = (outcome: Outcome, detail: string): Finding => ({
    family: trial.family,
    label: trial.label,
    outcome,
    detail,
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"hang">((resolve) => {
    timer = setTimeout(() => resolve("hang"), trial.timeoutMs ?? HANG_MS);
  });
  let result: { value: unknown } | { error: unknown } | "hang";
  try {
    result = await Promise.race([
      (async () => {
        try {
          return { value: await trial.run() };
        } catch (error) {
          return { error };
        }
      })(),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
  if (result === "hang") return found("hang", `no answer in ${trial.timeoutMs ?? HANG_MS} ms`);
  if ("value" in result) {
    if (trial.expect === "refuse") return found("silent", `returned ${brief(result.value)}`);
    const wrong = trial.check ? await trial.check(result.value) : undefined;
    return wrong === undefined ? found("ok", "") : found("silent", wrong);
  }
  const error = result.error;
  if (!(error instanceof Error)) return found("crash", `threw a non-Error: ${String(error)}`);
  const message = `${error.name}: ${error.message}`;
  if (trial.expect === "accept") return found("refused", message);
  if (trial.clearAs?.some((type) => error instanceof type)) return found("clear", message);
  if (error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError) {
    return found("crash", message);
  }
  const named = trial.names === undefined || trial.names.some((name) => namesWord(error.message, name));
  return found(named && EXPECTED.test(error.message) ? "clear" : "vague", message);
}

/** A value as a finding shows it: short. */
function brief(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  if (ArrayBuffer.isView(value)) return `${value.constructor.name}(${(value as Float32Array).length})`;
  if (typeof value === "object") return `${value.constructor?.name ?? "object"}`;
  return String(value).slice(0, 60);
}

/** Outcome counts per family, and every finding that is neither clear nor ok. */
export class Tally {
  /** Counts by family, then by outcome. */
  readonly counts: Record<string, Record<Outcome, number>> = {};
  /** Every finding that is not `clear` or `ok`. */
  readonly findings: Finding[] = [];

  /** Runs trials one after another and counts them. */
  async run(trials: Iterable<Trial>): Promise<void> {
    for (const trial of trials) this.add(await attempt(trial));
  }

  /** Counts one finding. */
  add(finding: Finding): void {
    const family = this.counts[finding.family] ??= Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<
      Outcome,
      number
    >;
    family[finding.outcome]++;
    if (finding.outcome !== "clear" && finding.outcome !== "ok") this.findings.push(finding);
  }

  /** Counts over every family. */
  total(): Record<Outcome, number> & { calls: number } {
    const total = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
    for (const family of Object.values(this.counts)) for (const o of OUTCOMES) total[o] += family[o];
    return { calls: OUTCOMES.reduce((sum, o) => sum + total[o], 0), ...total };
  }

  /** The findings as lines, `outcome family: label: detail`. */
  report(limit = 200): string {
    return this.findings.slice(0, limit).map((f) => `${f.outcome} ${f.family}: ${f.label}: ${f.detail}`).join("\n");
  }

  /** The summary a committed JSON holds: calls and outcomes in all and per family. */
  summary(): { calls: number; outcomes: Record<Outcome, number>; families: Record<string, Record<Outcome, number>> } {
    const { calls, ...outcomes } = this.total();
    return { calls, outcomes, families: this.counts };
  }
}

/**
 * Writes a tally's summary under `key` into the JSON file at `path`, keeping the other keys there (the ops'
 * and llm's batteries share one file), and its findings beside it when `findings` is given.
 */
export async function writeSummary(path: string, key: string, tally: Tally): Promise<void> {
  let all: Record<string, unknown> = {};
  try {
    all = JSON.parse(await Deno.readTextFile(path));
  } catch {
    // a new file
  }
  all[key] = tally.summary();
  await Deno.writeTextFile(path, JSON.stringify(all, null, 2) + "\n");
}
