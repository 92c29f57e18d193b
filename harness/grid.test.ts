import { deepStrictEqual } from "node:assert/strict";
import { rowLayout, streamWorkgroups } from "./grid.ts";
import { assertThrowsMessage } from "./testing.ts";

Deno.test("rowLayout: fewest invocations that hold a row, rows per workgroup, streaming past the limit", () => {
  // 1024 columns = 256 vec4s: 32 invocations of 8 vec4s, 8 rows per workgroup.
  deepStrictEqual(rowLayout(100, 1024, 8, 65535), { threads: 32, resident: true, workgroups: [13, 1, 1] });
  // A row of 3 elements touches 1 vec4 on a boundary, 2 when it straddles one: still one invocation.
  deepStrictEqual(rowLayout(5, 3, 8, 65535), { threads: 1, resident: true, workgroups: [1, 1, 1] });
  // 8192 columns fill 256 invocations exactly; one more vec4 is streamed.
  deepStrictEqual(rowLayout(2, 8192, 8, 65535), { threads: 256, resident: true, workgroups: [2, 1, 1] });
  deepStrictEqual(rowLayout(2, 8196, 8, 65535).resident, false);
  // 70,000 single-workgroup rows fold into y.
  deepStrictEqual(rowLayout(70000, 8192, 8, 65535).workgroups, [35000, 2, 1]);
});

Deno.test("streamWorkgroups: one workgroup per block, capped, none for no elements", () => {
  deepStrictEqual(
    [streamWorkgroups(0, 4096, 65535), streamWorkgroups(1, 4096, 65535), streamWorkgroups(4097, 4096, 65535)],
    [0, 1, 2],
  );
  deepStrictEqual(streamWorkgroups(2 ** 30, 4096, 65535), 65535);
});

Deno.test("rowLayout refuses NaN, fractional and negative sizes", async () => {
  for (const [rows, cols, per] of [[NaN, 4, 8], [4, NaN, 8], [-1, 4, 8], [4, -4, 8], [4, 4.5, 8], [4, 4, 0]]) {
    await assertThrowsMessage(() => rowLayout(rows, cols, per, 65535), /^rowLayout: (rows|cols|perInvocation) must be/);
  }
  await assertThrowsMessage(() => rowLayout(4, 4, 8, NaN), "rowLayout: maxPerDimension must be an integer >= 1");
});

Deno.test("streamWorkgroups refuses NaN, fractional and negative sizes, a block of 0 and a limit of 0", async () => {
  const bad: [number, number, number, string][] = [
    [NaN, 4096, 65535, "elements must be an integer >= 0, got NaN"],
    [-1, 4096, 65535, "elements must be an integer >= 0, got -1"],
    [4.5, 4096, 65535, "elements must be an integer >= 0, got 4.5"],
    [Infinity, 4096, 65535, "elements must be an integer >= 0, got Infinity"],
    [10, 0, 65535, "blockElements must be an integer >= 1, got 0"],
    [10, NaN, 65535, "blockElements must be an integer >= 1, got NaN"],
    [10, 4096, 0, "maxPerDimension must be an integer >= 1, got 0"],
    [10, 4096, NaN, "maxPerDimension must be an integer >= 1, got NaN"],
  ];
  for (const [elements, block, max, message] of bad) {
    await assertThrowsMessage(() => streamWorkgroups(elements, block, max), `streamWorkgroups: ${message}`);
  }
});
