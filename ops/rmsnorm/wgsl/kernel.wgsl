// rmsnorm/kernel: out[n, c] = x[n, c] * inverseSqrt(mean_c(x[n, c]^2) + eps) * weight[n % groups, c],
// x is [rows, d]; groups = 0 means no weight (ones).
//
// Memory is read and written in quads (vec4s): quad q holds elements 4q .. 4q + 3. The bindings are
// 16-byte padded, so every quad is readable. `threads` invocations (a power of two) share a row,
// 256 / threads rows per workgroup; lane k of a row takes quads k, k + threads, ..., PER of them
// per chunk, all loads of a chunk issued before the first is used.
// - resident = 1 (the row fits one chunk): the row is read once into registers, its sum of squares
//   reduced through workgroup memory, and the row scaled and written from registers.
// - resident = 0 (longer rows, one row per workgroup): the sum of squares is accumulated over the
//   chunks, and the row is read a second time to write it, last chunk first, so that the chunks
//   read last (the likeliest still in L2) are read again first.
//
// Each of those has two paths, chosen by the (uniform) shape:
// - d % 4 == 0 (`resident_aligned`, `streamed_aligned`): every row starts on a quad, so a quad is
//   wholly in its row or wholly past its end, and lines up with a quad of the weight. Every load is
//   issued unconditionally, its index clamped to the row's last quad; the duplicate a clamped load
//   reads is dropped from the sum by one compare per quad. A row past the end of x (surplus rows of
//   the last workgroup) reads the last row and writes nothing. The weight quads are loaded together
//   after the reduction (for a row in registers; with x in the second pass of a streamed row), and
//   each quad is written with one vec4 store.
// - d % 4 != 0 (`ragged`): rows start off quad boundaries, so the components outside a row are
//   masked per element (reading a neighbour's components is harmless), loads past the row's last
//   quad are skipped, the weight is read per component, and a partial quad is written one
//   component at a time, so no element outside the row is ever written.
//
// The reduction goes through workgroup memory in two steps, each written out in full (no loop over
// a runtime count): groups of 16 partials, then every invocation adds its row's groups. Two
// barriers, whatever the row's width.
// Workgroups beyond 65,535 fold into y: workgroup = id.x + id.y * num_workgroups.x.
//
// Those functions are in include/rmsnorm_body.wgsl, shared with rmsnorm/modulated; here its two
// hooks store the normalised, weighted value as it is.
struct Params {
  rows: u32,
  d: u32,
  groups: u32,
  eps: f32,
  threads: u32,   // invocations per row, a power of two <= 256
  resident: u32,  // 1 when every row fits PER * threads quads
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read> weight: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;

const WORKGROUP = 256u;
const PER = 8u; // quads per invocation per chunk (mod.ts sizes `threads` with the same number)


// #include "rmsnorm_body.wgsl"

fn modulate_quad(row: u32, j: u32, y: vec4f) -> vec4f {
  return y;
}

fn modulate_elements(begin: u32, q: u32, mask: vec4<bool>, y: vec4f) -> vec4f {
  return y;
}

// #include "row_main.wgsl"
