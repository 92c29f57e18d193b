// group_norm/fused: the split path's two steps in one dispatch, so that each row's statistics and its
// normalisation run close together in time: the normalising workgroups read the row while (or just
// after) its statistics workgroups read it, so the second read of x can come from L2 rather than
// from memory, and no dispatch boundary separates the two steps.
//
// Work comes in tasks, rows times (params.chunks + params.blocks) of them: row r's tasks are its
// params.chunks statistics pieces (piece.wgsl, as group_norm/stats), then its params.blocks blocks
// to normalise (block.wgsl, as group_norm/apply), then row r + 1's. A workgroup takes the next task
// from a ticket counter (state[0], atomically incremented as it starts), not from its workgroup id,
// so a block's pieces are taken before the block, by workgroups that have already started.
//
// A piece's mean and M2 are published as two atomic words, state[1 + 2 * (row * chunks + piece)]
// and the one after: each word holds its f32's bits plus one (a NaN with every bit set is first
// made the canonical 0x7fc00000), so 0 means "not yet written" and each word is complete on its
// own; no ordering between the words is needed. The piece's count follows from its size. The
// normalising workgroup issues its block's loads, then invocation p polls piece p's words, at most
// params.polls times; a piece still unpublished after that is computed by the workgroup itself, with
// the function the statistics workgroup runs. So nothing waits without end, whatever order or number
// of workgroups the device runs at once (lavapipe, the software adapter, ends a loop after 65,535
// iterations, and WebGPU promises no forward progress between workgroups): a slow statistics
// workgroup costs time, never correctness. The pieces are then merged as group_norm/apply merges
// them (the same tree in every block of the row, so all of them use the same mean and variance, up
// to the rounding of a piece recomputed by another call of the same code). The state must be zero
// before the dispatch: mod.ts marks it `zeroed`, so the device clears it before each run.
// #include "params.wgsl"

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(5) var<uniform> params: Params;

var<workgroup> ticket: u32;

// #include "summary.wgsl"

// #include "normalise.wgsl"

// #include "piece.wgsl"

// An f32 as a nonzero word: its bits plus one, the all-ones NaN made canonical first.
fn publish(v: f32) -> u32 {
  let bits = bitcast<u32>(v);
  return select(bits, 0x7fc00000u, bits == 0xffffffffu) + 1u;
}

// The f32 a published word holds.
fn unpublish(word: u32) -> f32 {
  return bitcast<f32>(word - 1u);
}

// Values in piece `piece` of a row: span quads or elements, the last piece shorter.
fn piece_count(piece: u32) -> f32 {
  let aligned = params.d % 4u == 0u && params.l % 4u == 0u;
  let length = select(params.d, params.d / 4u, aligned);
  let begin = piece * params.span;
  return f32((min(begin + params.span, length) - begin) * select(1u, 4u, aligned));
}

// Each piece's mean and M2 as this workgroup found them (published, or computed itself), and which
// pieces were not published within params.polls polls.
var<workgroup> found_means: array<f32, WG>;
var<workgroup> found_m2s: array<f32, WG>;
var<workgroup> missing: array<u32, WG>;
var<workgroup> any_missing: u32;

// The row's mean and 1 / sqrt(var + eps), from its pieces' summaries: the published ones, and any
// the workgroup computes itself. Called once per workgroup, in uniform control flow.
fn row_stats(row: u32, lid: u32) -> vec2f {
  if (lid < params.chunks) {
    let at = 1u + 2u * (row * params.chunks + lid);
    var mean = atomicLoad(&state[at]);
    var m2 = atomicLoad(&state[at + 1u]);
    for (var poll = 0u; poll < params.polls && (mean == 0u || m2 == 0u); poll++) {
      mean = atomicLoad(&state[at]);
      m2 = atomicLoad(&state[at + 1u]);
    }
    missing[lid] = select(0u, 1u, mean == 0u || m2 == 0u);
    found_means[lid] = unpublish(mean);
    found_m2s[lid] = unpublish(m2);
  }
  workgroupBarrier();
  if (lid == 0u) {
    var any = 0u;
    for (var piece = 0u; piece < params.chunks; piece++) {
      any |= missing[piece];
    }
    any_missing = any;
  }
  if (workgroupUniformLoad(&any_missing) != 0u) {
    for (var piece = 0u; piece < params.chunks; piece++) {
      if (workgroupUniformLoad(&missing[piece]) != 0u) {
        let summary = piece_summary(row, piece, lid);
        if (lid == 0u) {
          found_means[piece] = summary.y;
          found_m2s[piece] = summary.z;
        }
      }
    }
    workgroupBarrier();
  }
  var mine = vec3f(0.0);
  for (var piece = lid; piece < params.chunks; piece += WG) {
    mine = merge(mine, vec3f(piece_count(piece), found_means[piece], found_m2s[piece]));
  }
  let stats = reduce_summary(mine, lid);
  return vec2f(stats.y, inverseSqrt(stats.z / stats.x + params.eps));
}

// #include "block.wgsl"

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32) {
  if (lid == 0u) {
    ticket = atomicAdd(&state[0], 1u);
  }
  let task = workgroupUniformLoad(&ticket);
  let tasks = params.chunks + params.blocks;
  if (task >= params.rows * tasks) {
    return;
  }
  let row = task / tasks;
  let k = task % tasks;
  if (k < params.chunks) {
    let summary = piece_summary(row, k, lid);
    if (lid == 0u) {
      let at = 1u + 2u * (row * params.chunks + k);
      atomicStore(&state[at], publish(summary.y));
      atomicStore(&state[at + 1u], publish(summary.z));
    }
  } else {
    normalise_block(row, k - params.chunks, lid);
  }
}
