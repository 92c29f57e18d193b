// Element-wise access to vec4-typed bindings at the edges of transpose's and permute's 16-byte
// tiles: the including kernel binds `x` (read) and `out` (written) as array<vec4f>.
fn x_at(i: u32) -> f32 {
  return x[i >> 2u][i & 3u];
}

// Up to four consecutive elements of x from element i on: the first `count`, the rest 0.
fn load_part(i: u32, count: u32) -> vec4f {
  var v = vec4f(0.0);
  if (count > 0u) { v.x = x_at(i); }
  if (count > 1u) { v.y = x_at(i + 1u); }
  if (count > 2u) { v.z = x_at(i + 2u); }
  if (count > 3u) { v.w = x_at(i + 3u); }
  return v;
}

// The first `count` components of w to out from element i on, one at a time.
fn store_part(i: u32, count: u32, w: vec4f) {
  if (count > 0u) { out[i >> 2u][i & 3u] = w.x; }
  if (count > 1u) { out[(i + 1u) >> 2u][(i + 1u) & 3u] = w.y; }
  if (count > 2u) { out[(i + 2u) >> 2u][(i + 2u) & 3u] = w.z; }
  if (count > 3u) { out[(i + 3u) >> 2u][(i + 3u) & 3u] = w.w; }
}

// How many of the four elements from (a, b) on lie inside an [A, B] matrix (b runs along row a).
fn valid(a: u32, A: u32, b: u32, B: u32) -> u32 {
  return select(0u, min(4u, B - b), a < A && b < B);
}
