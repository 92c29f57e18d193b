// The 8 x 8 outputs of this invocation: rows 0-3 of acc are the top rows, 4-7 the bottom ones.
// Module-scope private variables start at zero.
var<private> acc0_left: vec4f;
var<private> acc0_right: vec4f;
var<private> acc1_left: vec4f;
var<private> acc1_right: vec4f;
var<private> acc2_left: vec4f;
var<private> acc2_right: vec4f;
var<private> acc3_left: vec4f;
var<private> acc3_right: vec4f;
var<private> acc4_left: vec4f;
var<private> acc4_right: vec4f;
var<private> acc5_left: vec4f;
var<private> acc5_right: vec4f;
var<private> acc6_left: vec4f;
var<private> acc6_right: vec4f;
var<private> acc7_left: vec4f;
var<private> acc7_right: vec4f;
