// The row sum of the row kernels (softmax, rmsnorm, layernorm, reduce), shared by harness/gen.ts's
// includes. The including kernel declares `const WORKGROUP = 256u` (its workgroup size) and gives
// each row t invocations; `partials` and `groups` are the workgroup memory of its other row
// reductions too.
var<workgroup> partials: array<f32, WORKGROUP>;
var<workgroup> groups: array<f32, 16>;

// The sum of `value` over the t invocations of this invocation's row (t a power of two <= 256);
// each of them gets the result. t <= 16: every invocation adds its row's t partials (an index past
// the row clamped to its last lane, and dropped by a select). t > 16: 16 invocations each add 16
// partials of one row (lanes j, j + t / 16, ...: conflict-free reads), then every invocation adds
// its row's t / 16 group sums. Two barriers, the last after every read of `partials`; every read
// of `groups` precedes the next reduction's first barrier, so consecutive reductions need none between.
fn reduce_sum(value: f32, lid: u32, t: u32) -> f32 {
  if (t == 1u) {
    return value;
  }
  partials[lid] = value;
  workgroupBarrier();
  if (t <= 16u) {
    let base = lid - lid % t;
    var acc = partials[base];
    acc += select(0.0, partials[base + min(1u, t - 1u)], 1u < t);
    acc += select(0.0, partials[base + min(2u, t - 1u)], 2u < t);
    acc += select(0.0, partials[base + min(3u, t - 1u)], 3u < t);
    acc += select(0.0, partials[base + min(4u, t - 1u)], 4u < t);
    acc += select(0.0, partials[base + min(5u, t - 1u)], 5u < t);
    acc += select(0.0, partials[base + min(6u, t - 1u)], 6u < t);
    acc += select(0.0, partials[base + min(7u, t - 1u)], 7u < t);
    acc += select(0.0, partials[base + min(8u, t - 1u)], 8u < t);
    acc += select(0.0, partials[base + min(9u, t - 1u)], 9u < t);
    acc += select(0.0, partials[base + min(10u, t - 1u)], 10u < t);
    acc += select(0.0, partials[base + min(11u, t - 1u)], 11u < t);
    acc += select(0.0, partials[base + min(12u, t - 1u)], 12u < t);
    acc += select(0.0, partials[base + min(13u, t - 1u)], 13u < t);
    acc += select(0.0, partials[base + min(14u, t - 1u)], 14u < t);
    acc += select(0.0, partials[base + min(15u, t - 1u)], 15u < t);
    workgroupBarrier();
    return acc;
  }
  let per_row = t / 16u;
  if (lid < 16u) {
    let start = (lid / per_row) * t + lid % per_row;
    var acc = partials[start];
    acc += partials[start + 1u * per_row];
    acc += partials[start + 2u * per_row];
    acc += partials[start + 3u * per_row];
    acc += partials[start + 4u * per_row];
    acc += partials[start + 5u * per_row];
    acc += partials[start + 6u * per_row];
    acc += partials[start + 7u * per_row];
    acc += partials[start + 8u * per_row];
    acc += partials[start + 9u * per_row];
    acc += partials[start + 10u * per_row];
    acc += partials[start + 11u * per_row];
    acc += partials[start + 12u * per_row];
    acc += partials[start + 13u * per_row];
    acc += partials[start + 14u * per_row];
    acc += partials[start + 15u * per_row];
    groups[lid] = acc;
  }
  workgroupBarrier();
  let first = (lid / t) * per_row;
  var acc = groups[first];
  acc += select(0.0, groups[first + min(1u, per_row - 1u)], 1u < per_row);
  acc += select(0.0, groups[first + min(2u, per_row - 1u)], 2u < per_row);
  acc += select(0.0, groups[first + min(3u, per_row - 1u)], 3u < per_row);
  acc += select(0.0, groups[first + min(4u, per_row - 1u)], 4u < per_row);
  acc += select(0.0, groups[first + min(5u, per_row - 1u)], 5u < per_row);
  acc += select(0.0, groups[first + min(6u, per_row - 1u)], 6u < per_row);
  acc += select(0.0, groups[first + min(7u, per_row - 1u)], 7u < per_row);
  acc += select(0.0, groups[first + min(8u, per_row - 1u)], 8u < per_row);
  acc += select(0.0, groups[first + min(9u, per_row - 1u)], 9u < per_row);
  acc += select(0.0, groups[first + min(10u, per_row - 1u)], 10u < per_row);
  acc += select(0.0, groups[first + min(11u, per_row - 1u)], 11u < per_row);
  acc += select(0.0, groups[first + min(12u, per_row - 1u)], 12u < per_row);
  acc += select(0.0, groups[first + min(13u, per_row - 1u)], 13u < per_row);
  acc += select(0.0, groups[first + min(14u, per_row - 1u)], 14u < per_row);
  acc += select(0.0, groups[first + min(15u, per_row - 1u)], 15u < per_row);
  return acc;
}
