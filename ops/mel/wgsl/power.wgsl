// mel/power: out[i] = re[i]^2 + im[i]^2 of a spectrum of (re, im) pairs, x is [n, 2], out is [n]
// (+inf where a part is infinite, as torch's |z|^2).
// Each invocation reads one vec4 (two pairs) per step of a grid-stride loop and writes their two
// powers; the second is skipped past the end when n is odd, so nothing past out's end is written.
struct Params {
  n: u32, // pairs
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

const WG = 256u;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32,
        @builtin(num_workgroups) groups: vec3u) {
  let quads = (params.n + 1u) / 2u;
  for (var q = wid.x * WG + lid; q < quads; q += groups.x * WG) {
    let v = x[q];
    let p = vec2f(v.x * v.x + v.y * v.y, v.z * v.z + v.w * v.w);
    // |z| is hypot's in torch: an infinite part gives inf, even beside a NaN (the sum would be NaN).
    // Infinity is read from the bits, which a compiler cannot fold away.
    let infinite = (bitcast<vec4u>(v) & vec4u(0x7fffffffu)) == vec4u(0x7f800000u);
    let power = select(p, vec2f(bitcast<f32>(0x7f800000u)), infinite.xz | infinite.yw);
    out[2u * q] = power.x;
    if (2u * q + 1u < params.n) {
      out[2u * q + 1u] = power.y;
    }
  }
}
