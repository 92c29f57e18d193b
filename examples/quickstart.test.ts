/**
 * `examples/quickstart.ts`, which README points to as the shortest complete program, runs as a user
 * runs it (`deno run -A examples/quickstart.ts`, `@xpu/ops` resolved to the working tree), and what
 * it prints holds: softmax's kernel within 1e-5 of the reference, a positive time and fraction of a
 * measured roofline. About 40 s on a software adapter (its roofline probes and clock warm-ups).
 */
import { ok } from "node:assert/strict";
import { gpuTest } from "../harness/testing.ts";

const root = new URL("../", import.meta.url);

gpuTest("examples/quickstart.ts runs and prints the kernel's agreement and its roofline fraction", async () => {
  const run = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", "examples/quickstart.ts"],
    cwd: root.pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const out = new TextDecoder().decode(run.stdout);
  ok(run.success, `quickstart failed:\n${out}\n${new TextDecoder().decode(run.stderr)}`);
  ok(/^adapter: .+ \(target: [\w-]+\)$/m.test(out), out);
  const worst = /^softmax 512x1024: worst relative difference from the reference (\S+)$/m.exec(out);
  ok(worst && Number(worst[1]) < 1e-5, out);
  const timed = /^(\S+) ms, (\S+) GB\/s: (\S+)% of the (bandwidth|compute) roofline/m.exec(out);
  ok(timed && Number(timed[1]) > 0 && Number(timed[2]) > 0 && Number(timed[3]) > 0, out);
});
