// The products of one step of the pipelined 128 x 128 dp4a tiles (q8row_dp4a_pipelined,
// q4g128_dp4a_pipelined and their fused forms; dp4a_tile128_pipelined.wgsl), its 16 words written
// out where they run, neither looped over nor called: dp4a_multiply128.wgsl's words reading stage st
// of main (the stage index uniform, the word a constant, the lane tx or ty). Per word, four vec4u
// reads of workgroup memory feed the 64 dot4I8Packed of dp4a_dot8x8.wgsl into the i32 sums left0-7
// and right0-7 (dp4a_sums128.wgsl); the integer sums are exact, so they equal the single-stage
// tiles' whatever the order. No barrier: the walk has one per step. Needs a_t, w_t and HALF of the
// kernel and st, tx and ty of main.
    {
      let top = a_t[st][0u][ty];
      let bottom = a_t[st][0u][HALF + ty];
      let left = w_t[st][0u][tx];
      let right = w_t[st][0u][HALF + tx];
// #include "dp4a_dot8x8.wgsl"
    }
    {
      let top = a_t[st][1u][ty];
      let bottom = a_t[st][1u][HALF + ty];
      let left = w_t[st][1u][tx];
      let right = w_t[st][1u][HALF + tx];
// #include "dp4a_dot8x8.wgsl"
    }
    {
      let top = a_t[st][2u][ty];
      let bottom = a_t[st][2u][HALF + ty];
      let left = w_t[st][2u][tx];
      let right = w_t[st][2u][HALF + tx];
// #include "dp4a_dot8x8.wgsl"
    }
    {
      let top = a_t[st][3u][ty];
      let bottom = a_t[st][3u][HALF + ty];
      let left = w_t[st][3u][tx];
      let right = w_t[st][3u][HALF + tx];
// #include "dp4a_dot8x8.wgsl"
    }
    {
      let top = a_t[st][4u][ty];
      let bottom = a_t[st][4u][HALF + ty];
      let left = w_t[st][4u][tx];
      let right = w_t[st][4u][HALF + tx];
// #include "dp4a_dot8x8.wgsl"
    }
    {
      let top = a_t[st][5u][ty];
      let bottom = a_t[st][5u][HALF + ty];
      let left = w_t[st][5u][tx];
      let right = w_t[st][5u][HALF + tx];
// #include "dp4a_dot8x8.wgsl"
    }
    {
      let top = a_t[st][6u][ty];
      let bottom = a_t[st][6u][HALF + ty];
      let left = w_t[st][6u][tx];
      let right = w_t[st][6u][HALF + tx];
// #include "dp4a_dot8x8.wgsl"
    }
    {
      let top = a_t[st][7u][ty];
      let bottom = a_t[st][7u][HALF + ty];
      let left = w_t[st][7u][tx];
      let right = w_t[st][7u][HALF + tx];
// #include "dp4a_dot8x8.wgsl"
    }
    {
      let top = a_t[st][8u][ty];
      let bottom = a_t[st][8u][HALF + ty];
      let left = w_t[st][8u][tx];
      let right = w_t[st][8u][HALF + tx];
// #include "dp4a_dot8x8.wgsl"
    }
    {
      let top = a_t[st][9u][ty];
      let bottom = a_t[st][9u][HALF + ty];
      let left = w_t[st][9u][tx];
      let right = w_t[st][9u][HALF + tx];
// #include "dp4a_dot8x8.wgsl"
    }
    {
      let top = a_t[st][10u][ty];
      let bottom = a_t[st][10u][HALF + ty];
      let left = w_t[st][10u][tx];
      let right = w_t[st][10u][HALF + tx];
// #include "dp4a_dot8x8.wgsl"
    }
    {
      let top = a_t[st][11u][ty];
      let bottom = a_t[st][11u][HALF + ty];
      let left = w_t[st][11u][tx];
      let right = w_t[st][11u][HALF + tx];
// #include "dp4a_dot8x8.wgsl"
    }
    {
      let top = a_t[st][12u][ty];
      let bottom = a_t[st][12u][HALF + ty];
      let left = w_t[st][12u][tx];
      let right = w_t[st][12u][HALF + tx];
// #include "dp4a_dot8x8.wgsl"
    }
    {
      let top = a_t[st][13u][ty];
      let bottom = a_t[st][13u][HALF + ty];
      let left = w_t[st][13u][tx];
      let right = w_t[st][13u][HALF + tx];
// #include "dp4a_dot8x8.wgsl"
    }
    {
      let top = a_t[st][14u][ty];
      let bottom = a_t[st][14u][HALF + ty];
      let left = w_t[st][14u][tx];
      let right = w_t[st][14u][HALF + tx];
// #include "dp4a_dot8x8.wgsl"
    }
    {
      let top = a_t[st][15u][ty];
      let bottom = a_t[st][15u][HALF + ty];
      let left = w_t[st][15u][tx];
      let right = w_t[st][15u][HALF + tx];
// #include "dp4a_dot8x8.wgsl"
    }
