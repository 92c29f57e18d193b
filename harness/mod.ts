/**
 * The harness: the contract every op's GPU entry point is built on.
 *
 * - {@link acquireDevice} / {@link ResidentDevice}: the device (a caller's, never destroyed, or
 *   our own), resident tensors, the pipeline cache, dispatch with error scopes, one-shot runs.
 * - {@link KernelPlan}: the typed description of one dispatch (kernel, bindings, params,
 *   workgroups, cost).
 * - {@link Program} / {@link BoundDispatch}: plans bound once to their tensors
 *   ({@link ResidentDevice.bind}, {@link ResidentDevice.program}) and replayed with no validation
 *   or allocation: what engines and models run.
 * - {@link resolve}: override → target + dtype → target → dtype → portable, with the rung that hit.
 * - {@link describeAdapter} / {@link detectTarget}: what the adapter said and the target inferred.
 * - {@link parseVariantName}: the `<entry>[.<target>][.<dtype>].wgsl` grammar.
 * - {@link checkDispatch} / {@link LimitError}: the limits guard, before anything is encoded.
 * - {@link packParams}: validated uniform params.
 * - {@link rowLayout} / {@link streamWorkgroups}: grids shared by row ops and streaming kernels.
 * - {@link copyToHost}: host copies of a structure's tensors, restored by uploads alone (a pipeline's
 *   released stages).
 *
 * The bench (roofline probes, timing, bench cases and runs, reports) is `@xpu/ops/harness/bench`.
 * Nothing here imports a Deno-only API; the test helpers (`harness/testing.ts`) and the kernel
 * generator (`harness/gen.ts`) are tooling and are not re-exported.
 *
 * @module
 */

export {
  acquireDevice,
  type AcquireOptions,
  type BindingRole,
  type BindingSpec,
  DeviceLostError,
  type DeviceMemory,
  dtypeOf,
  type GpuTensor,
  type HostArray,
  type KernelPlan,
  type KernelSequence,
  kernelSequence,
  requireDevice,
  ResidentDevice,
  type TensorDtype,
  tensorView,
} from "./device.ts";
export { type BoundDispatch, encodeBound, Program } from "./program.ts";
export { copyToHost, type HostCopy, PendingUploads } from "./host_copy.ts";
export {
  bindingBytes,
  checkDispatch,
  type DispatchShape,
  foldWorkgroups,
  type GuardedLimits,
  LimitError,
  requireWorkgroupStorage,
  workgroupBytesOf,
  workgroupSizeOf,
} from "./limits.ts";
export type { KernelOptions } from "./options.ts";
export { packParams, type ParamField } from "./params.ts";
export { ROW_WORKGROUP, type RowLayout, rowLayout, streamWorkgroups } from "./grid.ts";
export { type Resolution, resolve, type ResolveRequest, type Rung } from "./resolve.ts";
export { type AdapterDescription, type AdapterInfoLike, describeAdapter, detectTarget } from "./target.ts";
export {
  type Dtype,
  entriesOf,
  type KernelSources,
  parseVariantName,
  type Target,
  type VariantName,
  variantsOf,
} from "./variants.ts";
