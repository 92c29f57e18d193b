// moe/dispatch: slots for each expert in (rank, token) order, one workgroup per expert.
//
// The workgroup walks the T * k assignments 256 at a time in the order rank 0 of tokens 0 .. T-1,
// then rank 1, ..., flags those choosing its expert, and scans the flags (Hillis-Steele in
// workgroup memory) so each flagged assignment knows how many came before it: below capacity it
// takes that slot (slot_token and token_slot written), otherwise it is dropped (token_slot -1).
// Each assignment chooses exactly one expert (mod.ts checks the indices), so each token_slot
// element has exactly one writer. The expert's unused slots are then set to -1.
struct Params {
  tokens: u32,
  experts: u32,
  k: u32,
  capacity: u32,
}

@group(0) @binding(0) var<storage, read> choice: array<i32>;
@group(0) @binding(1) var<storage, read_write> slot_token: array<i32>;
@group(0) @binding(2) var<storage, read_write> token_slot: array<i32>;
@group(0) @binding(3) var<uniform> params: Params;

const WG = 256u;

var<workgroup> scan: array<u32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
  let e = wid.x + wid.y * groups.x;
  if (e >= params.experts) {
    return;  // uniform across the workgroup
  }
  let k = lid.x;
  let total = params.tokens * params.k;
  var count = 0u;
  for (var block = 0u; block < total; block += WG) {
    let a = block + k;  // assignment a: rank a / T of token a % T
    var index = 0u;
    var flag = false;
    if (a < total) {
      index = (a % params.tokens) * params.k + a / params.tokens;
      flag = choice[index] == i32(e);
    }
    scan[k] = select(0u, 1u, flag);
    workgroupBarrier();
    for (var step = 1u; step < WG; step *= 2u) {
      var add = 0u;
      if (k >= step) {
        add = scan[k - step];
      }
      workgroupBarrier();
      scan[k] += add;
      workgroupBarrier();
    }
    if (flag) {
      let place = count + scan[k] - 1u;
      if (place < params.capacity) {
        slot_token[e * params.capacity + place] = i32(a % params.tokens);
        token_slot[index] = i32(e * params.capacity + place);
      } else {
        token_slot[index] = -1;
      }
    }
    count += scan[WG - 1u];
    workgroupBarrier();
  }
  for (var c = count + k; c < params.capacity; c += WG) {
    slot_token[e * params.capacity + c] = -1;
  }
}
