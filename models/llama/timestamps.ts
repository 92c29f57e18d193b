/**
 * Timestamp queries around compute passes: a helper for the engine's GPU timings.
 *
 * @module
 */

/**
 * Records `passes` compute passes with a timestamp at the start and end of each, submits them in
 * one command buffer and reads the timestamps back.
 *
 * @param device a device with the timestamp-query feature
 * @param passes how many passes `record` makes
 * @param record encodes pass i with the timestamp writes it is given
 * @returns nanoseconds: pass i's start at `2i`, its end at `2i + 1`
 */
export async function timePasses(
  device: GPUDevice,
  passes: number,
  record: (encoder: GPUCommandEncoder, writes: (i: number) => GPUComputePassTimestampWrites) => void,
): Promise<BigUint64Array> {
  const count = 2 * passes;
  const querySet = device.createQuerySet({ type: "timestamp", count });
  const resolve = device.createBuffer({
    size: 8 * count,
    usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
  });
  const read = device.createBuffer({ size: 8 * count, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  try {
    const encoder = device.createCommandEncoder();
    record(encoder, (i) => ({ querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 }));
    encoder.resolveQuerySet(querySet, 0, count, resolve, 0);
    encoder.copyBufferToBuffer(resolve, 0, read, 0, 8 * count);
    device.queue.submit([encoder.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    const t = new BigUint64Array(read.getMappedRange().slice(0));
    read.unmap();
    return t;
  } finally {
    querySet.destroy();
    resolve.destroy();
    read.destroy();
  }
}
