"""Goldens for ops/moe from torch (run on the GPU machine: python3 ops/moe/goldens/gen.py).

Writes moe.json beside this file.
- router: Mixtral's routing (MixtralSparseMoeBlock): softmax over the experts, torch.topk, and with
  norm_topk_prob the k weights divided by their sum; in float64 on float32 logits, rounded once.
  Random logits (no ties: torch.topk leaves their order undefined, the reference pins it itself).
- dispatch: GShard / fairseq top2gating's capacity rule for k ranks: locations by cumulative sum of
  each rank's one-hot mask, rank r offset by the counts of all earlier ranks, kept when below
  capacity.
- layer: a dense MoE layer, out[t] = sum over kept ranks of gate * (x[t] @ W_e), float64, with
  capacity T (nothing dropped) and capacity 2 (some dropped by the rule above).
"""
import json, pathlib, struct, torch
import torch.nn.functional as F


def f32_json(t):
    out = []
    for v in t.flatten().tolist():
        s = next(s for s in (float(f"{v:.{p}g}") for p in range(1, 10))
                 if struct.unpack("f", struct.pack("f", s))[0] == struct.unpack("f", struct.pack("f", v))[0])
        out.append(int(s) if s.is_integer() and s != 0 else s)
    return out


def route(logits, k, norm):
    probs = F.softmax(logits.double(), dim=1)
    gates, experts = torch.topk(probs, k, dim=-1)
    if norm:
        gates = gates / gates.sum(dim=-1, keepdim=True)
    return experts, gates


def dispatch(experts, E, capacity):
    T, k = experts.shape
    slot_token = torch.full((E, capacity), -1, dtype=torch.int64)
    token_slot = torch.full((T, k), -1, dtype=torch.int64)
    prior = torch.zeros(E, dtype=torch.int64)
    for r in range(k):
        mask = F.one_hot(experts[:, r], E)
        locations = torch.cumsum(mask, dim=0) - 1 + prior[None, :]
        prior = prior + mask.sum(dim=0)
        loc = (locations * mask).sum(dim=1)
        for t in range(T):
            if loc[t] < capacity:
                e = int(experts[t, r])
                slot_token[e, loc[t]] = t
                token_slot[t, r] = e * capacity + loc[t]
    return slot_token, token_slot


torch.manual_seed(0)
router = []
for T, E, k, norm in [(13, 8, 2, True), (9, 20, 4, False), (5, 4, 1, False), (7, 6, 6, True)]:
    logits = torch.randn(T, E)
    experts, gates = route(logits, k, norm)
    router.append({"T": T, "E": E, "k": k, "normTopkProb": norm, "logits": f32_json(logits),
                   "experts": experts.flatten().tolist(), "gates": f32_json(gates.float())})

dispatches = []
for T, E, k, capacity in [(10, 4, 2, 3), (16, 3, 3, 5), (6, 2, 1, 4)]:
    experts = torch.stack([torch.randperm(E)[:k] for _ in range(T)])
    slot_token, token_slot = dispatch(experts, E, capacity)
    dispatches.append({"T": T, "E": E, "k": k, "capacity": capacity, "experts": experts.flatten().tolist(),
                       "slotToken": slot_token.flatten().tolist(), "tokenSlot": token_slot.flatten().tolist()})

T, D, Fo, E, k = 11, 12, 8, 6, 2
x = torch.randn(T, D)
w_router = torch.randn(E, D) / D ** 0.5
w_experts = torch.randn(E, D, Fo) / D ** 0.5
logits = (x.double() @ w_router.double().T).float()
experts, gates = route(logits, k, True)
layers = []
for capacity in (T, 2):
    _, token_slot = dispatch(experts, E, capacity)
    out = torch.zeros(T, Fo, dtype=torch.float64)
    for t in range(T):
        for r in range(k):
            if token_slot[t, r] >= 0:
                out[t] += gates[t, r] * (x[t].double() @ w_experts[experts[t, r]].double())
    layers.append({"capacity": capacity, "dropped": int((token_slot < 0).sum()), "out": f32_json(out.float())})
layer = {"T": T, "D": D, "F": Fo, "E": E, "k": k, "normTopkProb": True, "x": f32_json(x),
         "logits": f32_json(logits), "wExperts": f32_json(w_experts), "cases": layers}

path = pathlib.Path(__file__).with_name("moe.json")
path.write_text(json.dumps({"meta": {"torch": torch.__version__}, "router": router, "dispatch": dispatches,
                            "layer": layer}, separators=(",", ":")))
print(f"wrote {path} (torch {torch.__version__})")
