"""Non-finite goldens for ops/moe from torch (python3 ops/moe/goldens/nonfinite.py).

Writes nonfinite.json beside this file, torch on the CPU:
- router: Mixtral's routing, softmax(logits, -1) in float32, torch.topk(k), and with norm_topk_prob
  the k gates divided by their sum, over rows holding a NaN logit, a +inf logit (both make the row's
  softmax NaN), every logit -inf (NaN too), and -inf logits beside finite ones (probability 0);
  `experts` is torch.topk's choice, whose order among equal probabilities (and NaN ones) torch leaves
  undefined;
- gather: out[t] = sum over kept assignments of gates[t, r] * y[tokenSlot[t, r]], as Mixtral's
  index_add_ of gated expert outputs, in float64 on float32 inputs, with NaN, +inf and -inf in y and in
  the gates, and dropped assignments (slot -1) whose non-finite gate is never applied.
Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import nan, inf, golden, write

logits = torch.tensor([[0.5, 2.0, -1.0, 1.0], [1.0, nan, 3.0, 0.0], [1.0, inf, 2.0, 0.0],
                       [-inf, -inf, -inf, -inf], [-inf, 1.0, -inf, 0.5], [2.0, -inf, 1.0, -inf]])
T, E, k = 6, 4, 2
cases = []
for norm in (False, True):
    probs = torch.softmax(logits, -1)
    gates, experts = torch.topk(probs, k, dim=-1)
    if norm:
        gates = gates / gates.sum(-1, keepdim=True)
    cases.append({"entry": "router", "T": T, "E": E, "k": k, "normTopkProb": norm, "logits": golden(logits),
                  "experts": experts.flatten().tolist(), "gates": golden(gates)})

torch.manual_seed(0)
D, slots = 3, 5
y = torch.randn(slots, D)
y[0, 1], y[2, 0], y[4, 2] = nan, inf, -inf
token_slot = torch.tensor([[0, 3], [2, -1], [4, 1], [3, 2]])
gates = torch.rand(4, 2)
gates[1, 0], gates[1, 1], gates[3, 0] = nan, inf, -inf  # gates[1, 1] belongs to a dropped assignment
out_ = torch.zeros(4, D, dtype=torch.float64)
for t in range(4):
    for r in range(2):
        if token_slot[t, r] >= 0:
            out_[t] += gates[t, r].double() * y[token_slot[t, r]].double()
cases.append({"entry": "gather", "T": 4, "k": 2, "slots": slots, "D": D, "y": golden(y),
              "tokenSlot": token_slot.flatten().tolist(), "gates": golden(gates), "out": golden(out_)})
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
