/**
 * The VAE decoder's pieces that work on `[C, H, W]` feature maps (batch 1): GroupNorm (affine, eps
 * 1e-6), the ResnetBlock `x + conv2(SiLU(GN(conv1(SiLU(GN(x))))))` with a 1x1 `conv_shortcut` on x
 * when the channels change (output scale 1), and 3x3 convolutions with bias, padding 1.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../../harness/device.ts";
import type { TensorStore } from "../../../llm/safetensors.ts";
import { activationPlan } from "../../../ops/activation/mod.ts";
import { axpyInplacePlan } from "../../../ops/axpy/mod.ts";
import { conv2dPlan } from "../../../ops/conv/mod.ts";
import { elementwisePlan } from "../../../ops/elementwise/mod.ts";
import { groupNormPlan } from "../../../ops/group_norm/mod.ts";
import { freeOnFailure } from "../../loading.ts";
import { VAE_NORM_EPS } from "../config.ts";
import type { Steps } from "../program.ts";

/** A convolution's weight `[Cout, Cin, k, k]` and bias `[Cout]` on the GPU. */
export interface Conv {
  /** Input channels. */
  Cin: number;
  /** Output channels. */
  Cout: number;
  /** Kernel size (3 or 1). */
  k: number;
  /** The weight. */
  weight: GpuTensor;
  /** The bias. */
  bias: GpuTensor;
}

/** A GroupNorm's affine weight and bias `[C]`. */
export interface Norm {
  /** Channels. */
  C: number;
  /** The weight. */
  weight: GpuTensor;
  /** The bias. */
  bias: GpuTensor;
}

/** A ResnetBlock2D's weights. */
export interface Resnet {
  /** GroupNorm before conv1. */
  norm1: Norm;
  /** First 3x3 convolution. */
  conv1: Conv;
  /** GroupNorm before conv2. */
  norm2: Norm;
  /** Second 3x3 convolution. */
  conv2: Conv;
  /** 1x1 convolution of x when the channels change. */
  shortcut?: Conv;
}

/** Work tensors the decoder's steps share, each as large as its largest feature map. */
export interface FeatureScratch {
  /** Feature-map sized work tensors. */
  a: GpuTensor;
  /** See a. */
  b: GpuTensor;
  /** GroupNorm's per-piece statistics (split path). */
  partials: GpuTensor;
  /** The decoder's group count. */
  groups: number;
}

/**
 * Uploads a convolution.
 *
 * @param gpu the device
 * @param store the decoder's tensors
 * @param name the module's name (`conv_in`, `up_blocks.0.resnets.1.conv2`, ...)
 * @returns the convolution
 */
export async function loadConv(gpu: ResidentDevice, store: TensorStore, name: string): Promise<Conv> {
  const [Cout, Cin, k] = store.info(`${name}.weight`).shape;
  // Both read before either is uploaded: a read that fails leaves nothing uploaded.
  const weight = await store.readFloat32(`${name}.weight`), bias = await store.readFloat32(`${name}.bias`);
  return { Cin, Cout, k, weight: gpu.upload(weight, `${name}.weight`), bias: gpu.upload(bias, `${name}.bias`) };
}

/**
 * Uploads a GroupNorm's weight and bias.
 *
 * @param gpu the device
 * @param store the decoder's tensors
 * @param name the module's name
 * @returns the norm
 */
export async function loadNorm(gpu: ResidentDevice, store: TensorStore, name: string): Promise<Norm> {
  // Both read before either is uploaded: a read that fails leaves nothing uploaded.
  const weight = await store.readFloat32(`${name}.weight`), bias = await store.readFloat32(`${name}.bias`);
  return { C: weight.length, weight: gpu.upload(weight, `${name}.weight`), bias: gpu.upload(bias, `${name}.bias`) };
}

/**
 * Uploads a ResnetBlock2D.
 *
 * @param gpu the device
 * @param store the decoder's tensors
 * @param name the module's name
 * @returns the block
 */
export async function loadResnet(gpu: ResidentDevice, store: TensorStore, name: string): Promise<Resnet> {
  const shortcut = store.tensors.some((t) => t.name === `${name}.conv_shortcut.weight`);
  // A load that fails halfway frees what it uploaded.
  return await freeOnFailure(async (keep) => ({
    norm1: keep(await loadNorm(gpu, store, `${name}.norm1`)),
    conv1: keep(await loadConv(gpu, store, `${name}.conv1`)),
    norm2: keep(await loadNorm(gpu, store, `${name}.norm2`)),
    conv2: keep(await loadConv(gpu, store, `${name}.conv2`)),
    shortcut: shortcut ? keep(await loadConv(gpu, store, `${name}.conv_shortcut`)) : undefined,
  }));
}

/**
 * The tensors of a convolution, norm or resnet, to free them.
 *
 * @param x the module
 * @returns its tensors
 */
export function tensorsOf(x: Conv | Norm | Resnet): GpuTensor[] {
  if ("weight" in x) return [x.weight, x.bias];
  return [x.norm1, x.conv1, x.norm2, x.conv2, ...(x.shortcut ? [x.shortcut] : [])].flatMap(tensorsOf);
}

/**
 * The GroupNorm statistics a feature map needs (the split path's partials; 0 on the rows path).
 *
 * @param gpu the device
 * @param C channels
 * @param L spatial size
 * @param groups groups
 * @returns elements of the partials tensor
 */
export function partialsFor(gpu: ResidentDevice, C: number, L: number, groups: number): number {
  const plans = groupNormPlan(gpu, { N: 1, C, L, groups, eps: VAE_NORM_EPS, weight: true, bias: true });
  return plans.path === "split" ? plans.steps[0].bindings[1].length : 0;
}

/**
 * Appends `out = GroupNorm(x)` (affine, eps 1e-6).
 *
 * @param steps where the dispatches go
 * @param gpu the device
 * @param norm the weights
 * @param HW spatial size
 * @param x `[C, HW]`
 * @param out `[C, HW]`
 * @param s the scratch (its partials)
 */
export function groupNormSteps(
  steps: Steps,
  gpu: ResidentDevice,
  norm: Norm,
  HW: number,
  x: GpuTensor,
  out: GpuTensor,
  s: FeatureScratch,
): void {
  const { C, weight, bias } = norm;
  const plans = groupNormPlan(gpu, { N: 1, C, L: HW, groups: s.groups, eps: VAE_NORM_EPS, weight: true, bias: true });
  if (plans.path === "rows") steps.run(plans.steps[0], [x, weight, bias, out]);
  else {
    steps.run(plans.steps[0], [x, s.partials]);
    steps.run(plans.steps[1], [x, s.partials, weight, bias, out]);
  }
}

/**
 * Appends a convolution (stride 1, padding k/2) of `x` `[Cin, H, W]` into `out` `[Cout, H, W]`.
 *
 * @param steps where the dispatches go
 * @param gpu the device
 * @param conv the weights
 * @param H height
 * @param W width
 * @param x input
 * @param out output
 */
export function convSteps(
  steps: Steps,
  gpu: ResidentDevice,
  conv: Conv,
  H: number,
  W: number,
  x: GpuTensor,
  out: GpuTensor,
): void {
  const { Cin, Cout, k } = conv;
  const plan = conv2dPlan(gpu, { N: 1, Cin, Cout, H, W, kernelSize: k, padding: (k - 1) / 2, bias: true });
  steps.run(plan, [x, conv.weight, conv.bias, out]);
}

/**
 * Appends SiLU of `n` elements.
 *
 * @param steps where the dispatch goes
 * @param gpu the device
 * @param n elements
 * @param x input
 * @param out output
 */
export function siluSteps(steps: Steps, gpu: ResidentDevice, n: number, x: GpuTensor, out: GpuTensor): void {
  steps.run(activationPlan(gpu, { kind: "silu", n }), [x, out]);
}

/**
 * Appends a ResnetBlock2D: `x` `[Cin, H, W]` becomes the block's output `[Cout, H, W]`, in place
 * (x must hold Cout · H · W elements).
 *
 * @param steps where the dispatches go
 * @param gpu the device
 * @param r the block's weights
 * @param H height
 * @param W width
 * @param x the feature map, updated
 * @param s the scratch
 */
export function resnetSteps(
  steps: Steps,
  gpu: ResidentDevice,
  r: Resnet,
  H: number,
  W: number,
  x: GpuTensor,
  s: FeatureScratch,
): void {
  const HW = H * W, Cin = r.conv1.Cin, Cout = r.conv1.Cout;
  groupNormSteps(steps, gpu, r.norm1, HW, x, s.a, s);
  siluSteps(steps, gpu, Cin * HW, s.a, s.b);
  convSteps(steps, gpu, r.conv1, H, W, s.b, s.a);
  groupNormSteps(steps, gpu, r.norm2, HW, s.a, s.b, s);
  siluSteps(steps, gpu, Cout * HW, s.b, s.a);
  convSteps(steps, gpu, r.conv2, H, W, s.a, s.b);
  if (r.shortcut) {
    convSteps(steps, gpu, r.shortcut, H, W, x, s.a);
    steps.run(elementwisePlan(gpu, { op: "add", n: Cout * HW }), [s.a, s.b, x]);
  } else steps.run(axpyInplacePlan(gpu, { n: Cout * HW, alpha: 1 }), [s.b, x]);
}
