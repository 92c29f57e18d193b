/**
 * WebGPU primitives, each a plain-TypeScript reference (the definition of correct) and WGSL
 * kernels held to it, the harness they run on, and the roofline probes that measure the machine's
 * own ceilings.
 *
 * Every op is also importable alone as `@xpu/ops/ops/<op>`, which additionally exports its WGSL
 * sources as `KERNELS`; the harness alone as `@xpu/ops/harness`.
 *
 * Every op has three layers, all validated by one function per op, so each refuses the same input
 * with the same message: the reference `<op>(args)`, the one-shot `<op>Gpu(gpu, args)`, and
 * `<op>Plan(gpu, shape)` for resident tensors (`gpu.upload`, `gpu.submit`, `gpu.read`). The
 * argument names are one vocabulary across ops (README, "One vocabulary").
 *
 * @example
 * ```ts
 * import { acquireDevice, softmax, softmaxGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const x = new Float32Array([1, 2, 3, 4, 5, 6]);
 * const y = await softmaxGpu(gpu, { x, rows: 2, cols: 3 }); // the kernel resolved for this adapter
 * const reference = softmax({ x, rows: 2, cols: 3 }); // the definition it is held to
 * gpu.destroy();
 * ```
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice, rmsnormPlan, softmaxPlan } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([1, 2, 3, 4, 5, 6]));
 * const normed = gpu.alloc("f32", 6);
 * const probabilities = gpu.alloc("f32", 6);
 * const none = gpu.alloc("f32", 0);
 * await gpu.submit(
 *   [rmsnormPlan(gpu, { rows: 2, cols: 3 }), [x, none, normed]],
 *   [softmaxPlan(gpu, { rows: 2, cols: 3 }), [normed, probabilities]],
 * ); // one command buffer, nothing read back in between
 * const y = await gpu.read(probabilities);
 * gpu.destroy();
 * ```
 *
 * @module
 */

export * from "./harness/mod.ts";
export * from "./harness/roofline.ts";
export {
  activation,
  ACTIVATION_KINDS,
  type ActivationArgs,
  activationGpu,
  type ActivationKind,
  activationPlan,
  type ActivationShape,
  erf,
  erfc,
  validateActivation,
  validateActivationShape,
} from "./ops/activation/mod.ts";
export {
  axpy,
  type AxpyArgs,
  axpyGpu,
  axpyInplaceGpu,
  axpyInplacePlan,
  axpyPlan,
  type AxpyShape,
  validateAxpy,
  validateAxpyShape,
} from "./ops/axpy/mod.ts";
export {
  dequantTranspose,
  type DequantTransposeArgs,
  dequantTransposeGpu,
  dequantTransposePlan,
  type DequantTransposeShape,
  validateDequantTranspose,
  validateDequantTransposeShape,
} from "./ops/dequant_transpose/mod.ts";
export {
  dequantize,
  type DequantizeArgs,
  dequantizeGpu,
  dequantizePlan,
  type DequantizeShape,
  validateDequantize,
  validateDequantizeShape,
} from "./ops/dequantize/mod.ts";
export {
  elementwise,
  ELEMENTWISE_OPS,
  type ElementwiseArgs,
  elementwiseGpu,
  type ElementwiseOp,
  elementwisePlan,
  elementwiseRows,
  type ElementwiseRowsArgs,
  elementwiseRowsGpu,
  elementwiseRowsPlan,
  type ElementwiseRowsShape,
  type ElementwiseShape,
  validateElementwise,
  validateElementwiseRows,
  validateElementwiseRowsShape,
  validateElementwiseShape,
} from "./ops/elementwise/mod.ts";
export {
  gather,
  type GatherArgs,
  gatherGpu,
  gatherPlan,
  type GatherShape,
  MAX_ROWS,
  validateGather,
  validateGatherShape,
} from "./ops/gather/mod.ts";
export {
  layernorm,
  LAYERNORM_DEFAULT_EPS,
  type LayernormArgs,
  layernormGpu,
  layernormPlan,
  type LayernormShape,
  validateLayernorm,
  validateLayernormShape,
} from "./ops/layernorm/mod.ts";
export {
  LARGE_TILE_MIN_TILES,
  matmul,
  type MatmulArgs,
  matmulF16,
  type MatmulF16Args,
  matmulF16Gpu,
  matmulF16Plan,
  matmulGpu,
  matmulPlan,
  matmulQ4G128,
  type MatmulQ4G128Args,
  matmulQ4G128Gpu,
  matmulQ4G128Plan,
  matmulQ8,
  type MatmulQ8Args,
  matmulQ8Gpu,
  matmulQ8Plan,
  type MatmulShape,
  packF16,
  unpackF16,
  validateMatmul,
  validateMatmulF16,
  validateMatmulF16Shape,
  validateMatmulQ4G128,
  validateMatmulQ4G128Shape,
  validateMatmulQ8,
  validateMatmulQ8Shape,
  validateMatmulShape,
} from "./ops/matmul/mod.ts";
export {
  matvec,
  type MatvecArgs,
  matvecGpu,
  matvecPlan,
  matvecQ4G128,
  type MatvecQ4G128Args,
  matvecQ4G128Gpu,
  matvecQ4G128Plan,
  matvecQ8,
  type MatvecQ8Args,
  matvecQ8Gpu,
  matvecQ8Plan,
  type MatvecShape,
  packQ4,
  packQ8,
  Q4_GROUP,
  Q4_MAX,
  type Q4G128,
  Q8_MAX,
  QUANTIZED_TALL_MIN_ROWS,
  quantizeQ4G128,
  type QuantizeQ4G128Args,
  unpackQ4,
  unpackQ8,
  validateMatvec,
  validateMatvecQ4G128,
  validateMatvecQ4G128Shape,
  validateMatvecQ8,
  validateMatvecQ8Shape,
  validateMatvecShape,
} from "./ops/matvec/mod.ts";
export {
  collapsePermutation,
  MAX_PERMUTE_RANK,
  permute,
  type PermuteArgs,
  permuteGpu,
  permutePlan,
  type PermuteShape,
  validatePermute,
  validatePermuteShape,
} from "./ops/permute/mod.ts";
export {
  quantize,
  type QuantizeArgs,
  quantizeGpu,
  quantizePacked,
  quantizePackedGpu,
  quantizePackedPlan,
  quantizePackedQ4,
  quantizePackedQ4Gpu,
  quantizePackedQ4Plan,
  type QuantizePackedQ4Result,
  type QuantizePackedResult,
  type QuantizePackedShape,
  quantizePlan,
  type QuantizeResult,
  type QuantizeShape,
  validateQuantize,
  validateQuantizePackedQ4Shape,
  validateQuantizePackedShape,
  validateQuantizeShape,
} from "./ops/quantize/mod.ts";
export {
  reduce,
  REDUCE_OPS,
  type ReduceArgs,
  reduceGpu,
  type ReduceOp,
  reducePlan,
  type ReduceShape,
  type ReduceView,
  validateReduce,
  validateReduceShape,
} from "./ops/reduce/mod.ts";
export {
  rmsnorm,
  RMSNORM_DEFAULT_EPS,
  type RmsnormArgs,
  rmsnormGpu,
  rmsnormPlan,
  type RmsnormShape,
  validateRmsnorm,
  validateRmsnormShape,
} from "./ops/rmsnorm/mod.ts";
export {
  MAX_COLUMNS,
  scatter,
  type ScatterArgs,
  scatterGpu,
  scatterPlan,
  type ScatterShape,
  validateScatter,
  validateScatterShape,
} from "./ops/scatter/mod.ts";
export {
  softmax,
  type SoftmaxArgs,
  softmaxGpu,
  softmaxPlan,
  type SoftmaxShape,
  validateSoftmax,
  validateSoftmaxShape,
} from "./ops/softmax/mod.ts";
export {
  transpose,
  type TransposeArgs,
  transposeGpu,
  transposePlan,
  type TransposeShape,
  validateTranspose,
  validateTransposeShape,
} from "./ops/transpose/mod.ts";
export {
  conv1d,
  type Conv1dArgs,
  conv1dGpu,
  conv1dPlan,
  type Conv1dShape,
  conv2d,
  type Conv2dArgs,
  conv2dGpu,
  conv2dPlan,
  type Conv2dShape,
  conv3d,
  type Conv3dArgs,
  conv3dGpu,
  conv3dPlan,
  type Conv3dShape,
  type ConvArrays,
  type ConvCommon,
  type ConvGeometry,
  convGeometry,
  convPlan,
  type Spatial,
  validateConv1d,
  validateConv1dShape,
  validateConv2d,
  validateConv2dShape,
  validateConv3d,
  validateConv3dShape,
  validateConvArrays,
} from "./ops/conv/mod.ts";
export {
  convTranspose1d,
  type ConvTranspose1dArgs,
  type ConvTranspose1dGeometry,
  convTranspose1dGpu,
  convTranspose1dPlan,
  type ConvTranspose1dShape,
  validateConvTranspose1d,
  validateConvTranspose1dShape,
} from "./ops/conv_transpose/mod.ts";
export {
  GROUP_NORM_DEFAULT_EPS,
  GROUP_NORM_SPLIT_ROWS,
  groupNorm,
  type GroupNormArgs,
  groupNormGpu,
  type GroupNormOptions,
  groupNormPlan,
  type GroupNormPlans,
  type GroupNormShape,
  validateGroupNorm,
  validateGroupNormShape,
} from "./ops/group_norm/mod.ts";
export {
  CHANNEL_NORM_ACTIVATIONS,
  CHANNEL_NORM_DEFAULT_EPS,
  channelNorm,
  type ChannelNormArgs,
  channelNormGpu,
  type ChannelNormLayout,
  channelNormLayout,
  channelNormPlan,
  type ChannelNormShape,
  validateChannelNorm,
  validateChannelNormShape,
} from "./ops/channel_norm/mod.ts";
export {
  snake,
  SNAKE_EPS,
  type SnakeArgs,
  snakeBeta,
  type SnakeBetaArgs,
  snakeBetaGpu,
  snakeBetaPlan,
  snakeGpu,
  snakePlan,
  type SnakeShape,
  validateSnake,
  validateSnakeBeta,
  validateSnakeShape,
} from "./ops/snake/mod.ts";
export {
  DB_FLOOR,
  hzToMel,
  mel,
  type MelArgs,
  melFilterbank,
  type MelFilterbankOptions,
  melGpu,
  melPlan,
  type MelScale,
  type MelShape,
  melSpectrogram,
  type MelSpectrogramArgs,
  melSpectrogramGpu,
  type MelSpectrogramShape,
  melToHz,
  powerSpectrum,
  type PowerSpectrumArgs,
  powerSpectrumGpu,
  powerSpectrumPlan,
  validateMel,
  validateMelFilterbank,
  validateMelShape,
  validateMelSpectrogram,
  validateMelSpectrogramShape,
  validatePowerSpectrum,
  validatePowerSpectrumShape,
} from "./ops/mel/mod.ts";
export {
  pad,
  PAD_MODES,
  type PadArgs,
  padGpu,
  type PadMode,
  padPlan,
  type PadShape,
  validatePad,
  validatePadShape,
} from "./ops/pad/mod.ts";
export {
  fftTwiddles,
  hannWindow,
  istft,
  type IstftArgs,
  istftBasis,
  istftBasisLayout,
  istftGpu,
  type IstftPadding,
  istftPlan,
  type IstftShape,
  istftSpan,
  NOLA_THRESHOLD,
  stft,
  STFT_FFT_MAX_SIZE,
  type StftArgs,
  stftBasis,
  stftBasisLayout,
  stftBins,
  stftFftPlan,
  stftFrames,
  stftGpu,
  stftKernel,
  stftPlan,
  type StftShape,
  stftUsesFft,
  validateIstft,
  validateIstftShape,
  validateStft,
  validateStftShape,
} from "./ops/stft/mod.ts";
export {
  nearestSourceIndex,
  nearestUpsample2d,
  type NearestUpsample2dArgs,
  nearestUpsample2dGpu,
  nearestUpsample2dPlan,
  type NearestUpsample2dShape,
  validateNearestUpsample2d,
  validateNearestUpsample2dShape,
} from "./ops/upsample/mod.ts";
export {
  alibi,
  ALIBI_MAX_ELEMENTS,
  type AlibiArgs,
  alibiGpu,
  alibiPlan,
  type AlibiShape,
  alibiSlopes,
  validateAlibi,
  validateAlibiShape,
} from "./ops/alibi/mod.ts";
export {
  ctcDecode,
  type CtcDecodeArgs,
  ctcDecodeGpu,
  ctcDecodePlan,
  type CtcDecodeResult,
  type CtcDecodeShape,
  validateCtcDecode,
  validateCtcDecodeShape,
} from "./ops/ctc_decode/mod.ts";
export {
  type MoeDispatch,
  moeDispatch,
  type MoeDispatchArgs,
  moeDispatchGpu,
  moeDispatchPlan,
  type MoeDispatchShape,
  moeGather,
  type MoeGatherArgs,
  moeGatherGpu,
  moeGatherPlan,
  type MoeGatherShape,
  moeRouter,
  type MoeRouterArgs,
  moeRouterGpu,
  moeRouterPlan,
  type MoeRouterShape,
  type MoeRouting,
  validateMoeDispatch,
  validateMoeDispatchShape,
  validateMoeGather,
  validateMoeGatherShape,
  validateMoeRouter,
  validateMoeRouterShape,
} from "./ops/moe/mod.ts";
export {
  pope,
  type PopeArgs,
  popeArguments,
  popeGpu,
  popePlan,
  type PopeShape,
  validatePope,
  validatePopeShape,
} from "./ops/pope/mod.ts";
export {
  permuteRopeChannels,
  rope,
  ROPE_DEFAULT_THETA,
  type RopeArgs,
  ropeAxes,
  type RopeAxesArgs,
  ropeAxesGpu,
  type RopeAxesPairs,
  ropeAxesPlan,
  type RopeAxesShape,
  ropeFrequencies,
  ropeGpu,
  type RopePairing,
  ropePlan,
  type RopeResolved,
  type RopeScaling,
  type RopeShape,
  validateRope,
  validateRopeAxes,
  validateRopeAxesShape,
  validateRopeShape,
} from "./ops/rope/mod.ts";
export {
  attention,
  type AttentionArgs,
  attentionGpu,
  attentionPlan,
  type AttentionPlans,
  type AttentionShape,
  keyPaddingBias,
  type ResolvedAttentionShape,
  validateAttention,
  validateAttentionShape,
} from "./ops/attention/mod.ts";
export {
  flashAttention,
  type FlashAttentionArgs,
  flashAttentionGpu,
  flashAttentionPlan,
  type FlashAttentionShape,
  validateFlashAttention,
  validateFlashAttentionShape,
} from "./ops/flash_attention/mod.ts";
export {
  gqa,
  type GqaArgs,
  gqaGpu,
  type GqaOptions,
  gqaPlan,
  type GqaPlans,
  type GqaShape,
  kvCacheBytes,
  type KvCacheSize,
  validateGqa,
  validateGqaShape,
} from "./ops/gqa/mod.ts";
