// Multiplies the staged step into the 4 x 4 block (acc0-3: rows 4ty..4ty+3, columns 4tx..4tx+3),
// between barriers: after the stage is written, and before the next step overwrites it.
    workgroupBarrier();
    for (var k = 0u; k < STEP; k++) {
      let av = a_t[k * LANES + ty];
      let wv = w_t[k * LANES + tx];
      acc0 += av.x * wv;
      acc1 += av.y * wv;
      acc2 += av.z * wv;
      acc3 += av.w * wv;
    }
    workgroupBarrier();
