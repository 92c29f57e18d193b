// The decode state of a generation loop kept on the GPU (ops/sample writes it, ops/gqa's cache path
// reads it): `pos0`, the position of the call's first row, and `step`, the tokens generated so far.
// The including kernel binds it as `var<storage, ...> state: State`.
struct State { pos0: u32, step: u32, pad0: u32, pad1: u32 }
