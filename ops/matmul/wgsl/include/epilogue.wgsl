// The fused epilogue of matmul's *_fused kernels, applied to four outputs of a row, (row, col ..
// col + 3), after the product and before the store:
//   v = y + bias[col];  v = activation(v);  v = v * gate[row / gate_rows, col];  v = c[row, col] + v
// each step only where params_fused.wgsl's flags ask for it, in that order. The flags are uniform, so
// every invocation of a workgroup takes the same branches. The loads are bound-checked (zeros past
// the end of bias, gate or c), so outputs outside c, which are computed but never stored, read
// nothing outside their bindings; a binding whose flag is off is never read (the plan binds it with
// length 0). The activations are gelu.wgsl's and silu.wgsl's (harness/wgsl). Needs params (params_fused.wgsl),
// bias and gate (array<f32>: [N] and [M / gate_rows, N], row-major) and the kernel's load_c(row, col),
// four consecutive values of c's prior content, zeros outside c.
// #include "silu.wgsl"

// #include "gelu.wgsl"

// Four consecutive values of bias from column col; zeros past N.
fn bias_quad(col: u32) -> vec4f {
  var v = vec4f(0.0);
  for (var j = 0u; j < 4u; j++) {
    if (col + j < params.n) {
      v[j] = bias[col + j];
    }
  }
  return v;
}

// The gate of row `row` (its batch item's, row / gate_rows) at columns col .. col + 3.
fn gate_quad(row: u32, col: u32) -> vec4f {
  var v = vec4f(0.0);
  if (row < params.m) {
    let at = (row / params.gate_rows) * params.n + col;
    for (var j = 0u; j < 4u; j++) {
      if (col + j < params.n) {
        v[j] = gate[at + j];
      }
    }
  }
  return v;
}

fn epilogue(row: u32, col: u32, y: vec4f) -> vec4f {
  var v = y;
  if (params.bias != 0u) {
    v += bias_quad(col);
  }
  switch (params.activation) {
    case 1u: {
      v = gelu(v);
    }
    case 2u: {
      v = gelu_tanh(v);
    }
    case 3u: {
      v = silu(v);
    }
    default: {}
  }
  if (params.gate_rows != 0u) {
    v *= gate_quad(row, col);
  }
  if (params.accumulate != 0u) {
    v += load_c(row, col);
  }
  return v;
}
