/**
 * Options every GPU entry point accepts.
 *
 * @module
 */

/** Options every GPU entry point accepts. */
export interface KernelOptions {
  /**
   * Force a variant by name (e.g. `kernel.nvidia`), bypassing target detection. Naming a variant
   * that does not exist throws; it never falls back silently.
   */
  override?: string;
}
