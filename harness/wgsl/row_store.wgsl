// Writes the components of y that belong to the row (mask, from row_inside.wgsl's inside): one store
// for a whole quad, else one component at a time (the quad's other components belong to the
// neighbouring row). Shared by the ragged paths of softmax, rmsnorm and layernorm.
fn store(q: u32, y: vec4f, mask: vec4<bool>) {
  if (all(mask)) {
    out[q] = y;
    return;
  }
  if (mask.x) {
    out[q].x = y.x;
  }
  if (mask.y) {
    out[q].y = y.y;
  }
  if (mask.z) {
    out[q].z = y.z;
  }
  if (mask.w) {
    out[q].w = y.w;
  }
}
