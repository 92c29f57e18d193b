// The GPU-test helpers: without an adapter a GPU test is ignored locally but fails under CI=true.
// Each case runs `deno test` in a child process whose WebGPU has no backend for this OS
// (DENO_WEBGPU_BACKEND=metal off macOS, dx12 on macOS), so requestAdapter returns null there.
import { strictEqual } from "node:assert/strict";

const testing = new URL("./testing.ts", import.meta.url).href;
const noBackend = Deno.build.os === "darwin" ? "dx12" : "metal";

async function runWithoutAdapter(ci: boolean): Promise<{ code: number; out: string }> {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/no_adapter.test.ts`;
    await Deno.writeTextFile(
      file,
      `import { gpuTest, hasAdapter } from ${JSON.stringify(testing)};
if (hasAdapter) throw new Error("this child was meant to have no adapter");
gpuTest("needs a GPU", () => {});
`,
    );
    const env: Record<string, string> = { DENO_WEBGPU_BACKEND: noBackend, NO_COLOR: "1", CI: ci ? "true" : "false" };
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["test", "-A", "--no-lock", file],
      env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
    return { code, out };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("gpuTest without an adapter: fails under CI=true, never skips there", async () => {
  const { code, out } = await runWithoutAdapter(true);
  strictEqual(code, 1, out);
  strictEqual(out.includes("CI=true but no WebGPU adapter was found: GPU tests cannot be skipped in CI"), true, out);
  strictEqual(out.includes("0 passed | 1 failed"), true, out);
});

Deno.test("gpuTest without an adapter outside CI: ignored, and the name says why", async () => {
  const { code, out } = await runWithoutAdapter(false);
  strictEqual(code, 0, out);
  strictEqual(out.includes("needs a GPU (ignored: no WebGPU adapter)"), true, out);
  strictEqual(out.includes("0 passed | 0 failed | 1 ignored"), true, out);
});
