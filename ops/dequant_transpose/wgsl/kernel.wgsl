// dequant_transpose/kernel: out[k, n] = code[n, k] * scale[n]. The weight [N, K] is int8: weight is
// [N, ceil(K/4)] u32, four two's-complement codes per word, least significant byte first, and
// scale[n] is row n's scale; out is the f32 transposed matrix [K, N].
//
// Each workgroup turns one 32 x 32 tile through workgroup memory, so that both sides stay
// consecutive: invocation i reads word i % 8 of tile row i / 8 (eight neighbours read a row's 32
// codes, one 32-byte run), decodes and scales its four codes into the tile, and after the barrier
// writes four outputs down column i % 32 (32 neighbours write 32 consecutive floats of an output
// row). The tile is 33 wide so that the decoded codes, which are staged down the tile's columns,
// spread over the memory banks instead of landing eight to a bank.
// Tiles beyond 65,535 fold into y: tile = id.x + id.y * num_workgroups.x, bound-checked.
struct Params {
  n: u32,
  k: u32,
}

@group(0) @binding(0) var<storage, read> weight: array<u32>;
@group(0) @binding(1) var<storage, read> scale: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

const TILE = 32u;
const PITCH = 33u; // TILE + 1

// tile[kk * PITCH + nn] holds the dequantized weight at row n0 + nn, column k0 + kk.
var<workgroup> tile: array<f32, TILE * PITCH>;

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let tiles_n = (params.n + TILE - 1u) / TILE;
  let tiles = tiles_n * ((params.k + TILE - 1u) / TILE);
  let t = wid.x + wid.y * groups.x;
  if (t >= tiles) {
    return;
  }
  let n0 = (t % tiles_n) * TILE;
  let k0 = (t / tiles_n) * TILE;

  let read_n = lid / 8u;
  let read_k = (lid % 8u) * 4u;
  let n = n0 + read_n;
  if (n < params.n && k0 + read_k < params.k) {
    let word = bitcast<i32>(weight[n * ((params.k + 3u) / 4u) + (k0 + read_k) / 4u]);
    let row_scale = scale[n];
    for (var j = 0u; j < 4u; j++) {
      tile[(read_k + j) * PITCH + read_n] = f32(extractBits(word, 8u * j, 8u)) * row_scale;
    }
  }
  workgroupBarrier();

  let write_n = lid % TILE;
  for (var kk = lid / TILE; kk < TILE; kk += 8u) {
    let k = k0 + kk;
    if (k < params.k && n0 + write_n < params.n) {
      out[k * params.n + n0 + write_n] = tile[kk * PITCH + write_n];
    }
  }
}
