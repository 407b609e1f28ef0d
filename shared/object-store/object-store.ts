/**
 * The object-store port: the only way the core reads and writes bytes. Adapters: S3
 * (`s3-object-store.ts`), a local folder (`local-object-store.ts`) and memory
 * (`memory-object-store.ts`). Keys are relative to the adapter's root, use `/` as separator, and never
 * start with `/` or contain a `..` segment.
 */
export interface ObjectInfo {
  readonly key: string;
  readonly size: number;
  /** Last modification time, epoch milliseconds. */
  readonly lastModified: number;
  /** Opaque version tag; pass it back to `putIfMatch`. */
  readonly etag: string;
}

/** Inclusive byte range `[start, end]`, or the last `suffix` bytes. */
export type ByteRange = { readonly start: number; readonly end: number } | { readonly suffix: number };

export type PutIfAbsentResult = "created" | "exists";

export type PutIfMatchResult =
  { readonly outcome: "written"; readonly etag: string } | { readonly outcome: "etag-mismatch" };

export interface ListOptions {
  /** Only keys strictly after this one (in UTF-8 byte order), as S3's StartAfter. */
  readonly startAfter?: string;
  /** Page size; adapters may return fewer. Default 1000. */
  readonly pageSize?: number;
  /** Token from a previous page's `nextPageToken`. */
  readonly pageToken?: string;
}

export interface ListPage {
  readonly objects: readonly ObjectInfo[];
  /** Present when more keys follow. */
  readonly nextPageToken?: string;
}

export interface ObjectStore {
  /** The whole object. Throws `ObjectNotFoundError` if the key does not exist. */
  get(key: string): Promise<Uint8Array>;
  /** A byte range of the object. Throws `ObjectNotFoundError` if the key does not exist. */
  getRange(key: string, range: ByteRange): Promise<Uint8Array>;
  /** Writes (or overwrites) the object and returns its new ETag. */
  put(key: string, body: Uint8Array): Promise<{ etag: string }>;
  /**
   * Writes (or overwrites) the object from `parts` as they come, never holding it whole (S3's
   * multipart upload): each part but the last is at least `MIN_PART_BYTES`, and at least one part
   * comes. Nothing is written if `parts` or an upload fails. Optional: a store without it is given
   * the parts joined to `put` (`putInParts`).
   */
  putParts?(key: string, parts: AsyncIterable<Uint8Array>): Promise<{ etag: string }>;
  /**
   * Writes the object only if no object has the key: `created` if this call wrote it, `exists` if
   * the key was taken (by anyone, including a concurrent call). Never overwrites.
   */
  putIfAbsent(key: string, body: Uint8Array): Promise<PutIfAbsentResult>;
  /** Overwrites the object only if its current ETag is `etag`; otherwise nothing is written. */
  putIfMatch(key: string, body: Uint8Array, etag: string): Promise<PutIfMatchResult>;
  /** One page of the keys under `prefix`, in ascending UTF-8 byte order. */
  list(prefix: string, options?: ListOptions): Promise<ListPage>;
  /**
   * Every key under `prefix`, in ascending UTF-8 byte order, without its metadata: a local folder
   * lists them without a `stat` each (VACUUM of 1,000 files spent most of its time in those).
   * Optional: where a listing carries the metadata anyway (S3), `list` is the way (`listKeys`).
   */
  listKeys?(prefix: string): Promise<string[]>;
  /** The object's metadata, or `undefined` if the key does not exist. */
  head(key: string): Promise<ObjectInfo | undefined>;
  /**
   * Puts the object at the local path `file` (which must not exist) without its bytes passing
   * through the process: a local folder links it. Throws `ObjectNotFoundError` if the key does not
   * exist. Optional: a store without it is read and written (`ScratchFolder.take`).
   */
  copyToFile?(key: string, file: string): Promise<void>;
  /**
   * The local file that holds the object, for a reader that reads it where it is (no link, no
   * copy), or `undefined` if the key does not exist now. Optional: only a local folder has one.
   */
  localFile?(key: string): string | undefined;
  /** Deletes the object; deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  /** Deletes every key given; missing keys are not an error. */
  deleteMany(keys: readonly string[]): Promise<void>;
}

/** The smallest part but the last that a multipart upload takes (S3's limit, 5 MiB). */
export const MIN_PART_BYTES = 5 * 1024 * 1024;

/** Writes `parts` through `putParts`, or joined in memory to `put` when the store has no `putParts`. */
export async function putInParts(
  store: ObjectStore,
  key: string,
  parts: AsyncIterable<Uint8Array>,
): Promise<{ etag: string }> {
  if (store.putParts) return store.putParts(key, parts);
  const joined: Uint8Array[] = [];
  for await (const part of parts) joined.push(part);
  return store.put(key, Buffer.concat(joined));
}

/** Every key under `prefix`, following pages. */
export async function* listAll(
  store: ObjectStore,
  prefix: string,
  options: Omit<ListOptions, "pageToken"> = {},
): AsyncGenerator<ObjectInfo> {
  let pageToken: string | undefined;
  do {
    const page = await store.list(prefix, { ...options, ...(pageToken ? { pageToken } : {}) });
    yield* page.objects;
    pageToken = page.nextPageToken;
  } while (pageToken);
}

/** Collects `listAll` into an array. */
export async function listAllKeys(
  store: ObjectStore,
  prefix: string,
  options: Omit<ListOptions, "pageToken"> = {},
): Promise<ObjectInfo[]> {
  const out: ObjectInfo[] = [];
  for await (const info of listAll(store, prefix, options)) out.push(info);
  return out;
}

/** A listed key, with its metadata where the listing carried it. */
export interface ListedKey {
  readonly key: string;
  readonly info?: ObjectInfo;
}

/**
 * Every key under `prefix`, ascending: the store's `listKeys` where it has one (no metadata, which
 * the caller `head`s for the keys that need it), else `listAll`'s pages (metadata included).
 */
export async function listKeys(store: ObjectStore, prefix: string): Promise<ListedKey[]> {
  if (store.listKeys) return (await store.listKeys(prefix)).map((key) => ({ key }));
  return (await listAllKeys(store, prefix)).map((info) => ({ key: info.key, info }));
}
