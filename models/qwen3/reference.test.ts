import { assertClose } from "../../harness/testing.ts";
import { animaEncoderCases, animaTiny } from "./fixtures_test_util.ts";
import { Qwen3Reference, readQwen3Weights } from "./reference.ts";

// transformers ran the same f32 weights on the CPU (torch 2.11, SDPA); the reference sums in f64.
// Measured: largest difference 1.5e-6 (last_hidden_state), 9.5e-7 (layer 0), values of order 1: f32
// rounding of a 2-layer forward. The tolerance leaves room for that and none for a wrong convention:
// RoPE on adjacent pairs instead of rotate_half moves layer 0's output by 0.80 and the last state by 1.01.
const TOL = { atol: 2e-5, rtol: 2e-5 };

Deno.test("qwen3 reference: hidden states equal transformers' (Anima tiny: embeddings, layer 0, last_hidden_state)", async () => {
  const { config, store } = await animaTiny();
  const ref = new Qwen3Reference(config, await readQwen3Weights(store, config));
  for (const c of await animaEncoderCases()) {
    const states = ref.hiddenStates(c.ids);
    assertClose(states[states.length - 1], c.lastHiddenState, TOL, `${c.name} last_hidden_state`);
    if (c.embed) assertClose(states[0], c.embed, { atol: 0, rtol: 0 }, `${c.name} embeddings`);
    if (c.layer0) assertClose(states[1], c.layer0, TOL, `${c.name} layer 0 output`);
  }
});
