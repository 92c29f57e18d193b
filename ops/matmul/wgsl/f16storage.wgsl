// matmul/f16storage: c = a @ b, a is [M, K] and b is [K, N], both IEEE binary16 row-major, c is
// [M, N] f32 row-major. Two halves per u32 word, the lower-indexed element in the low 16 bits (what
// unpack2x16float reads), element e of a matrix in word e / 2: a row straddles two words when its
// length is odd. The operands are bound as vec2u, pairs of words (four halves, 8 bytes).
//
// Storage only: the halves are decoded to f32 (exactly) as they are staged, and all arithmetic is
// f32 (f32 FMAs into f32 accumulators), so the kernel needs no shader-f16 and does not use the f16
// rate; what it saves over matmul/kernel is half of the operands' bytes.
//
// The tiling is matmul/kernel's (see kernel.wgsl for the design and why): each workgroup computes
// one 128 x 128 tile of c; each of its 256 invocations owns 8 x 8 outputs in sixteen named vec4
// accumulators, function-local variables of main, rows 4ty..4ty+3 and 64+4ty..64+4ty+3 and columns
// 4tx..4tx+3 and 64+4tx..64+4tx+3 for (tx, ty) = (lid % 16, lid / 16). K is walked 16 at a time
// through one stage of workgroup memory (16 KiB of f32: a's block transposed, b's as vec4s along a
// row): loads, stores, a barrier, the 16 k-steps written out inline in main, a barrier.
//
// Four halves of a row of a are read as one pair of words when K % 4 == 0 (each row then starts on
// an 8-byte boundary), element by element otherwise; likewise b and N % 4, and c is written a vec4
// at a time when N % 4 == 0. Every guard is in the staging loads and the final stores, none in the
// k-steps: loads outside a or b stage zeros (the padding half of an odd-length matrix's last word is
// never read) and stores outside c are skipped, so every M, N, K >= 1 works. Tiles beyond 65,535
// fold into y: tile = id.x + id.y * num_workgroups.x, bound-checked.
//
// Interior tiles (wholly inside c, K % 4 == 0, N % 4 == 0) stage their full blocks of K with
// unchecked loads of pairs of words and store c unchecked, as matmul/kernel's do. On the H200
// (2026-11-30, GPU timestamps, warm clocks) that took 4096^3 from 31.6 to 36.5 TFLOP/s and
// 512 x 14336 x 4096 from 26.2 to 31.0. Reading the operands as vec4<f16> with shader-f16 instead of
// through unpack2x16float changed nothing (31.6 at 4096^3; 36.3 with the interior path), and f16
// arithmetic would not pay here: through this WebGPU the H200 runs f16 FMAs at the f32 rate (64.5
// TFLOP/s at vector widths 1, 2 and 4), so there is no .f16 variant.

// #include "params.wgsl"

@group(0) @binding(0) var<storage, read> a: array<vec2u>;
@group(0) @binding(1) var<storage, read> b: array<vec2u>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;

// Four consecutive k of row `row` of a (packed halves, a pair of words per vec2u), from column k (a
// multiple of 4), as f32; zeros outside a. When K % 4 == 0 the four halves are one aligned pair of
// words; otherwise each is read from its own word, element e of a being half e % 2 of word e / 2.
fn load_a(row: u32, k: u32) -> vec4f {
  var v = vec4f(0.0);
  if (row < params.m && k < params.k) {
    let e = row * params.k + k;
    if (params.k % 4u == 0u) {
      let w = a[e / 4u];
      v = vec4f(unpack2x16float(w.x), unpack2x16float(w.y));
    } else {
      for (var j = 0u; j < 4u; j++) {
        if (k + j < params.k) {
          let word = a[(e + j) / 4u][((e + j) / 2u) % 2u];
          v[j] = unpack2x16float(word)[(e + j) % 2u];
        }
      }
    }
  }
  return v;
}

// Four consecutive columns of row k of b (packed halves, a pair of words per vec2u), from column col
// (a multiple of 4), as f32; zeros outside b. When N % 4 == 0 the four halves are one aligned pair
// of words; otherwise each is read from its own word, element e of b being half e % 2 of word e / 2.
fn load_b(k: u32, col: u32) -> vec4f {
  var v = vec4f(0.0);
  if (k < params.k && col < params.n) {
    let e = k * params.n + col;
    if (params.n % 4u == 0u) {
      let w = b[e / 4u];
      v = vec4f(unpack2x16float(w.x), unpack2x16float(w.y));
    } else {
      for (var j = 0u; j < 4u; j++) {
        if (col + j < params.n) {
          let word = b[(e + j) / 4u][((e + j) / 2u) % 2u];
          v[j] = unpack2x16float(word)[(e + j) % 2u];
        }
      }
    }
  }
  return v;
}

// The unchecked loads of the interior blocks (see main), packed-half operands: the four halves of
// pair of words i of a and of b, as f32.
fn a_quad(i: u32) -> vec4f {
  let w = a[i];
  return vec4f(unpack2x16float(w.x), unpack2x16float(w.y));
}

fn b_quad(i: u32) -> vec4f {
  let w = b[i];
  return vec4f(unpack2x16float(w.x), unpack2x16float(w.y));
}

// The tile itself, constants, workgroup memory and main, is include/tile128.wgsl (kernel and
// f16storage differ only in their bindings and the loads above).
// #include "tile128.wgsl"
