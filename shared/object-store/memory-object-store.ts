import { createHash } from "node:crypto";
import { ObjectNotFoundError } from "./errors.ts";
import { assertValidKey, compareKeys } from "./object-key.ts";
import type {
  ByteRange,
  ListOptions,
  ListPage,
  ObjectInfo,
  ObjectStore,
  PutIfAbsentResult,
  PutIfMatchResult,
} from "./object-store.ts";
import { sliceRange } from "./byte-range.ts";

interface StoredObject {
  readonly body: Uint8Array;
  readonly info: ObjectInfo;
}

const DEFAULT_PAGE_SIZE = 1000;

/** An in-memory object store with the same contracts as S3, for unit tests. `now` is injectable. */
export class MemoryObjectStore implements ObjectStore {
  readonly #objects = new Map<string, StoredObject>();
  /** The keys in S3's order, so that a listing costs what it returns, as S3's does, not the store's size. */
  readonly #sorted: string[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  async get(key: string): Promise<Uint8Array> {
    return this.#require(key).body.slice();
  }

  async getRange(key: string, range: ByteRange): Promise<Uint8Array> {
    return sliceRange(this.#require(key).body, range);
  }

  async put(key: string, body: Uint8Array): Promise<{ etag: string }> {
    return { etag: this.#write(key, body) };
  }

  async putIfAbsent(key: string, body: Uint8Array): Promise<PutIfAbsentResult> {
    assertValidKey(key);
    if (this.#objects.has(key)) return "exists";
    this.#write(key, body);
    return "created";
  }

  async putIfMatch(key: string, body: Uint8Array, etag: string): Promise<PutIfMatchResult> {
    const current = this.#objects.get(key);
    if (!current || current.info.etag !== etag) return { outcome: "etag-mismatch" };
    return { outcome: "written", etag: this.#write(key, body) };
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const after = options.pageToken ?? options.startAfter;
    const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    const from =
      after !== undefined && compareKeys(after, prefix) >= 0
        ? this.#firstAt(after, true)
        : this.#firstAt(prefix, false);
    const page: string[] = [];
    let more = false;
    for (let i = from; i < this.#sorted.length && this.#sorted[i]!.startsWith(prefix); i++) {
      if (page.length === pageSize) {
        more = true;
        break;
      }
      page.push(this.#sorted[i]!);
    }
    const objects = page.map((k) => this.#objects.get(k)!.info);
    return more ? { objects, nextPageToken: page[page.length - 1]! } : { objects };
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    return this.#objects.get(key)?.info;
  }

  async delete(key: string): Promise<void> {
    this.#remove(key);
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    for (const key of keys) this.#remove(key);
  }

  /** The index of the first sorted key at or after `key` (after it, when `exclusive`). */
  #firstAt(key: string, exclusive: boolean): number {
    let low = 0;
    let high = this.#sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const order = compareKeys(this.#sorted[middle]!, key);
      if (order < 0 || (exclusive && order === 0)) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  #remove(key: string): void {
    if (!this.#objects.delete(key)) return;
    this.#sorted.splice(this.#firstAt(key, false), 1);
  }

  #require(key: string): StoredObject {
    const object = this.#objects.get(key);
    if (!object) throw new ObjectNotFoundError(key);
    return object;
  }

  #write(key: string, body: Uint8Array): string {
    assertValidKey(key);
    const etag = `"${createHash("md5").update(body).digest("hex")}"`;
    const info: ObjectInfo = { key, size: body.byteLength, lastModified: this.now(), etag };
    if (!this.#objects.has(key)) this.#sorted.splice(this.#firstAt(key, false), 0, key);
    this.#objects.set(key, { body: body.slice(), info });
    return etag;
  }
}
