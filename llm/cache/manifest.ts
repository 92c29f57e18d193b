/**
 * The weight manifest: a JSON file published beside a model's files that names each file with its
 * size and SHA-256, so a cache can check every byte it keeps and tell one version of a model from
 * the next.
 *
 * ```json
 * {
 *   "format": "xpu-weight-manifest",
 *   "version": 1,
 *   "files": [
 *     { "name": "config.json", "size": 612, "sha256": "9f86d0…" },
 *     { "name": "model.safetensors", "size": 1452212224, "sha256": "2c26b4…" }
 *   ]
 * }
 * ```
 *
 * - `name` is the file's path relative to the manifest's URL (`new URL(name, manifestUrl)`): no
 *   leading `/`, no `.` or `..` segment, no `\`, `?` or `#`, so it cannot point outside the model.
 * - `size` is in bytes; `sha256` is 64 lowercase hex digits of the file's whole content.
 * - The manifest's own identity is the SHA-256 of its raw bytes ({@linkcode manifestKey}): a cache
 *   keys everything by it, so a new version of the model (a new manifest) never reads an old file.
 *
 * @module
 */

/** The `format` field every manifest carries. */
export const MANIFEST_FORMAT = "xpu-weight-manifest";

/** One file of a model. */
export interface ManifestFile {
  /** Path relative to the manifest's URL. */
  name: string;
  /** Size in bytes. */
  size: number;
  /** SHA-256 of the whole file, 64 lowercase hex digits. */
  sha256: string;
}

/** A model's files, as published in its `manifest.json`. */
export interface WeightManifest {
  /** Always {@linkcode MANIFEST_FORMAT}. */
  format: typeof MANIFEST_FORMAT;
  /** Always 1: a reader refuses a version it does not know. */
  version: 1;
  /** The model's files, in the order a cache loads them. */
  files: ManifestFile[];
}

/**
 * SHA-256 of bytes (`crypto.subtle.digest`), as 64 lowercase hex digits.
 *
 * @param bytes the data
 * @returns its digest in hex
 * @example
 * ```ts
 * import { sha256Hex } from "@xpu/ops/llm";
 * const hex = await sha256Hex(new TextEncoder().encode("abc"));
 * // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
 * ```
 */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  requireBytes("sha256Hex", "bytes", bytes);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The key a cache stores a model under: the SHA-256 of the manifest's raw bytes.
 *
 * @param manifestBytes the manifest file exactly as served
 * @returns 64 hex digits
 * @example
 * ```ts
 * import { buildManifest, manifestKey, serializeManifest } from "@xpu/ops/llm";
 * const manifest = await buildManifest([{ name: "config.json", bytes: new TextEncoder().encode("{}") }]);
 * const key = await manifestKey(new TextEncoder().encode(serializeManifest(manifest)));
 * // pass it as `manifestSha256` to WeightCache.load: a cached model then loads with no request
 * ```
 */
export function manifestKey(manifestBytes: Uint8Array): Promise<string> {
  requireBytes("manifestKey", "manifestBytes", manifestBytes);
  return sha256Hex(manifestBytes);
}

/** Whether a file name stays inside the model's folder (see the module doc). */
function checkFileName(name: unknown, where: string): string {
  if (typeof name !== "string" || name === "") throw new Error(`${where}: name must be a non-empty string`);
  const bad = name.startsWith("/") || /[\\?#]/.test(name) ||
    name.split("/").some((segment) => segment === "" || segment === "." || segment === "..");
  if (bad) {
    throw new Error(`${where}: name must be a relative path with no empty, . or .. segment and no \\ ? #, got ${name}`);
  }
  return name;
}

/**
 * Reads and checks a manifest.
 *
 * @param source the manifest's JSON text or raw bytes
 * @returns the manifest
 * @throws Error naming the field that is wrong, what was expected and what was given
 * @example
 * ```ts
 * import { parseManifest } from "@xpu/ops/llm";
 * const manifest = parseManifest('{"format":"xpu-weight-manifest","version":1,"files":[]}');
 * ```
 */
export function parseManifest(source: string | Uint8Array): WeightManifest {
  if (typeof source !== "string") requireBytes("weight manifest", "source", source);
  const text = typeof source === "string" ? source : new TextDecoder().decode(source);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new Error(`weight manifest: the text is not JSON (${(e as Error).message})`);
  }
  const value = json as Partial<WeightManifest> | null;
  if (value === null || typeof value !== "object") throw new Error("weight manifest: expected an object");
  if (value.format !== MANIFEST_FORMAT) {
    throw new Error(`weight manifest: format must be "${MANIFEST_FORMAT}", got ${JSON.stringify(value.format)}`);
  }
  if (value.version !== 1) throw new Error(`weight manifest: version must be 1, got ${JSON.stringify(value.version)}`);
  if (!Array.isArray(value.files)) throw new Error("weight manifest: files must be an array");
  const seen = new Set<string>();
  const files = value.files.map((file: Partial<ManifestFile>, i: number) => {
    const where = `weight manifest: files[${i}]`;
    const name = checkFileName(file?.name, where);
    if (seen.has(name)) throw new Error(`${where}: name ${name} appears twice`);
    seen.add(name);
    if (!Number.isSafeInteger(file.size) || file.size! < 0) {
      throw new Error(`${where} (${name}): size must be a non-negative integer, got ${JSON.stringify(file.size)}`);
    }
    if (typeof file.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(file.sha256)) {
      throw new Error(`${where} (${name}): sha256 must be 64 lowercase hex digits, got ${JSON.stringify(file.sha256)}`);
    }
    return { name, size: file.size!, sha256: file.sha256 };
  });
  return { format: MANIFEST_FORMAT, version: 1, files };
}

/**
 * Builds the manifest of a model's files, in the order given (the converter writes this beside its
 * output).
 *
 * @param files each file's name (relative to where the manifest will be published) and bytes; an
 *   async iterable lets the caller read one file at a time
 * @returns the manifest; write it with {@linkcode serializeManifest}
 * @example
 * ```ts
 * import { buildManifest, serializeManifest } from "@xpu/ops/llm";
 * const manifest = await buildManifest([{ name: "config.json", bytes: new TextEncoder().encode("{}") }]);
 * const text = serializeManifest(manifest);
 * ```
 */
export async function buildManifest(
  files: Iterable<{ name: string; bytes: Uint8Array }> | AsyncIterable<{ name: string; bytes: Uint8Array }>,
): Promise<WeightManifest> {
  const entries: ManifestFile[] = [];
  for await (const { name, bytes } of files) {
    entries.push({ name, size: bytes.length, sha256: await sha256Hex(bytes) });
  }
  // The same checks a reader makes: a manifest we write is one we accept.
  return parseManifest(serializeManifest({ format: MANIFEST_FORMAT, version: 1, files: entries }));
}

/**
 * The manifest as JSON text: two-space indentation and a final newline, fields in a fixed order,
 * so the same files always give the same bytes (and the same {@linkcode manifestKey}).
 *
 * @param manifest the manifest
 * @returns its text
 * @example
 * ```ts
 * import { parseManifest, serializeManifest } from "@xpu/ops/llm";
 * const manifest = parseManifest('{"version":1,"files":[],"format":"xpu-weight-manifest"}');
 * serializeManifest(manifest); // '{\n  "format": "xpu-weight-manifest",\n  "version": 1,\n  "files": []\n}\n'
 * ```
 */
export function serializeManifest(manifest: WeightManifest): string {
  if (manifest === null || typeof manifest !== "object" || !Array.isArray(manifest.files)) {
    throw new Error(
      `serializeManifest: manifest must be a WeightManifest ({ format, version, files }), got ${String(manifest)}`,
    );
  }
  const files = manifest.files.map(({ name, size, sha256 }) => ({ name, size, sha256 }));
  return `${JSON.stringify({ format: manifest.format, version: manifest.version, files }, null, 2)}\n`;
}

/** Requires bytes (a Uint8Array), naming the argument: crypto.subtle and TextDecoder refuse anything else with a bare TypeError. */
function requireBytes(where: string, name: string, value: unknown): void {
  if (!(value instanceof Uint8Array)) {
    const given = value === null || typeof value !== "object" ? String(value) : value.constructor?.name ?? "an object";
    throw new Error(`${where}: ${name} must be a Uint8Array, got ${typeof value === "string" ? "a string" : given}`);
  }
}
