// The chunk's quads (row_chunk_quads.wgsl) and their vec4s of x, v0..v7, all loaded before any is
// used; an index past the row is clamped to its last quad (`last`), and the caller drops its value.
// #include "row_chunk_quads.wgsl"
    let v0 = x[min(first + j0, last)];
    let v1 = x[min(first + j1, last)];
    let v2 = x[min(first + j2, last)];
    let v3 = x[min(first + j3, last)];
    let v4 = x[min(first + j4, last)];
    let v5 = x[min(first + j5, last)];
    let v6 = x[min(first + j6, last)];
    let v7 = x[min(first + j7, last)];
