// layernorm/modulated: layernorm/kernel followed by adaLN modulation, for a batch of items (CFG's
// conditional and unconditional passes, say) of rows_per_item rows each:
// out[n, c] = ((x[n, c] - mean) * inverseSqrt(var + eps) * weight[c] + bias[c])
//             * (1 + scale[b, c]) + shift[b, c],   b = n / rows_per_item (integer division),
// x is [rows, d]; scale and shift are [rows / rows_per_item, d]; has_weight, has_bias = 0 mean ones,
// zeros (Anima's and Z-Image's final LayerNorm have neither); has_shift = 0 no shift. Everything else
// is layernorm/kernel's (include/layernorm_body.wgsl; its header comment is in kernel.wgsl). The
// modulation is applied as each value is stored: for d % 4 == 0 the rows of scale and shift line up
// with x's quads, one vec4 load each; otherwise they are read per component, like weight and bias.
struct Params {
  rows: u32,
  d: u32,
  has_weight: u32,
  has_bias: u32,
  eps: f32,
  threads: u32,        // invocations per row, a power of two <= 256
  resident: u32,       // 1 when every row fits PER * threads quads
  rows_per_item: u32,  // rows sharing one row of scale and shift
  has_shift: u32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read> weight: array<vec4f>;
@group(0) @binding(2) var<storage, read> bias: array<vec4f>;
@group(0) @binding(3) var<storage, read> scale: array<vec4f>;
@group(0) @binding(4) var<storage, read> shift: array<vec4f>;
@group(0) @binding(5) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(6) var<uniform> params: Params;

const WORKGROUP = 256u;
const PER = 8u; // quads per invocation per chunk (mod.ts sizes `threads` with the same number)

// #include "layernorm_body.wgsl"

// #include "modulate.wgsl"

// #include "row_main.wgsl"
