/**
 * Options every GPU entry point accepts.
 *
 * @module
 */

/**
 * Options every GPU entry point accepts. `V` is the op's variant names (its `<Op>Variant` type,
 * from the file names of its `wgsl/`), so an override is checked by the type checker as well as at
 * run time; it defaults to any string for code that handles every op alike.
 */
export interface KernelOptions<V extends string = string> {
  /**
   * Force a variant by name (e.g. `kernel.nvidia`), bypassing target detection. Naming a variant
   * that does not exist throws; it never falls back silently.
   */
  override?: V;
}
