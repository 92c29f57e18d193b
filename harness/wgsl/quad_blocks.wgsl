// The grid-stride walk of the NVIDIA streaming kernels whose output is computed a vec4 at a time
// (dequantize, gather): blocks of WG * PER vec4s of out (PER = 4), each invocation computing
// quad(i) for four of them, all four before any store so that their loads are in flight together;
// the last, partial block one vec4 at a time. Needs WG, PER, first (this workgroup's index), lid,
// groups, quads (whole vec4s of out), out and fn quad(i) -> vec4f.
  let span = WG * PER;
  for (var block = first * span; block < quads; block += groups.x * groups.y * span) {
    let i = block + lid;
    if (block + span <= quads) {
      let v0 = quad(i);
      let v1 = quad(i + WG);
      let v2 = quad(i + 2u * WG);
      let v3 = quad(i + 3u * WG);
      out[i] = v0;
      out[i + WG] = v1;
      out[i + 2u * WG] = v2;
      out[i + 3u * WG] = v3;
    } else {
      for (var k = 0u; k < PER; k++) {
        let j = i + k * WG;
        if (j < quads) {
          out[j] = quad(j);
        }
      }
    }
  }
