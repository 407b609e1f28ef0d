import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3ServiceException,
  UploadPartCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import {
  BucketNotFoundError,
  DATA_FOLDER_FULL_S3_CODE,
  DataFolderFullError,
  ObjectNotFoundError,
  StoreUnavailableError,
} from "./errors.ts";
import { assertValidKey, assertValidPrefix } from "./object-key.ts";
import { rangeHeader } from "./byte-range.ts";
import type {
  ByteRange,
  ListOptions,
  ListPage,
  ObjectInfo,
  ObjectStore,
  PutIfAbsentResult,
  PutIfMatchResult,
} from "./object-store.ts";

export interface S3ObjectStoreOptions {
  readonly client: S3Client;
  readonly bucket: string;
  /** Keys are relative to this prefix (ending in `/`). @default "" */
  readonly prefix?: string;
}

/** Parts of one multipart upload sent at once: each is held in memory until S3 has it. */
const PARTS_IN_FLIGHT = 3;

/** S3's DeleteObjects takes at most this many keys per call. */
const MAX_DELETE_BATCH = 1000;

/**
 * The object-store port on S3. Conditional writes use `If-None-Match: *` and `If-Match` (S3 honours
 * both since 2024); a 412 is a result, not an error. SDK errors are translated here and nowhere else.
 */
export class S3ObjectStore implements ObjectStore {
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;

  constructor(options: S3ObjectStoreOptions) {
    this.#client = options.client;
    this.#bucket = options.bucket;
    this.#prefix = options.prefix ?? "";
    assertValidPrefix(this.#prefix);
  }

  async get(key: string): Promise<Uint8Array> {
    return this.#read(key);
  }

  async getRange(key: string, range: ByteRange): Promise<Uint8Array> {
    return this.#read(key, rangeHeader(range));
  }

  async put(key: string, body: Uint8Array): Promise<{ etag: string }> {
    const out = await this.#call(key, () =>
      this.#client.send(new PutObjectCommand({ Bucket: this.#bucket, Key: this.#key(key), Body: body })),
    );
    return { etag: out.ETag ?? "" };
  }

  /** A multipart upload; aborted (its parts dropped) if a part or the parts' source fails. */
  async putParts(key: string, parts: AsyncIterable<Uint8Array>): Promise<{ etag: string }> {
    const target = { Bucket: this.#bucket, Key: this.#key(key) };
    const { UploadId } = await this.#call(key, () =>
      this.#client.send(new CreateMultipartUploadCommand(target)),
    );
    const upload = { ...target, UploadId };
    const sent: { PartNumber: number; ETag: string }[] = [];
    const inFlight = new Set<Promise<void>>();
    try {
      let partNumber = 0;
      for await (const body of parts) {
        const PartNumber = ++partNumber;
        const part: Promise<void> = this.#client
          .send(new UploadPartCommand({ ...upload, PartNumber, Body: body }))
          .then((out) => void sent.push({ PartNumber, ETag: out.ETag ?? "" }))
          .finally(() => inFlight.delete(part));
        part.catch(() => undefined); // awaited below; a failure is not unhandled meanwhile
        inFlight.add(part);
        // The source waits while parts are in flight: memory holds at most PARTS_IN_FLIGHT parts.
        if (inFlight.size >= PARTS_IN_FLIGHT) await Promise.race(inFlight);
      }
      await Promise.all(inFlight);
      sent.sort((a, b) => a.PartNumber - b.PartNumber);
      const out = await this.#client.send(
        new CompleteMultipartUploadCommand({ ...upload, MultipartUpload: { Parts: sent } }),
      );
      return { etag: out.ETag ?? "" };
    } catch (error) {
      await Promise.allSettled(inFlight);
      await this.#client.send(new AbortMultipartUploadCommand(upload)).catch(() => undefined);
      throw error instanceof S3ServiceException ? translate(error, this.#bucket, this.#prefix, key) : error;
    }
  }

  async putIfAbsent(key: string, body: Uint8Array): Promise<PutIfAbsentResult> {
    try {
      await this.#client.send(
        new PutObjectCommand({ Bucket: this.#bucket, Key: this.#key(key), Body: body, IfNoneMatch: "*" }),
      );
      return "created";
    } catch (error) {
      // 409 ConditionalRequestConflict: a concurrent conditional write to the same key is in flight.
      if (isStatus(error, 412) || isStatus(error, 409)) return "exists";
      throw translate(error, this.#bucket, this.#prefix, key);
    }
  }

  async putIfMatch(key: string, body: Uint8Array, etag: string): Promise<PutIfMatchResult> {
    try {
      const out = await this.#client.send(
        new PutObjectCommand({ Bucket: this.#bucket, Key: this.#key(key), Body: body, IfMatch: etag }),
      );
      return { outcome: "written", etag: out.ETag ?? "" };
    } catch (error) {
      if (isStatus(error, 412) || isStatus(error, 409) || isStatus(error, 404)) {
        return { outcome: "etag-mismatch" };
      }
      throw translate(error, this.#bucket, this.#prefix, key);
    }
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const out = await this.#call(prefix, () =>
      this.#client.send(
        new ListObjectsV2Command({
          Bucket: this.#bucket,
          Prefix: this.#prefix + prefix,
          ...(options.startAfter !== undefined ? { StartAfter: this.#prefix + options.startAfter } : {}),
          ...(options.pageToken !== undefined ? { ContinuationToken: options.pageToken } : {}),
          ...(options.pageSize !== undefined ? { MaxKeys: options.pageSize } : {}),
        }),
      ),
    );
    const objects: ObjectInfo[] = (out.Contents ?? []).map((o) => ({
      key: (o.Key ?? "").slice(this.#prefix.length),
      size: o.Size ?? 0,
      lastModified: o.LastModified?.getTime() ?? 0,
      etag: o.ETag ?? "",
    }));
    return out.IsTruncated && out.NextContinuationToken
      ? { objects, nextPageToken: out.NextContinuationToken }
      : { objects };
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    try {
      const out = await this.#client.send(
        new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }),
      );
      return {
        key,
        size: out.ContentLength ?? 0,
        lastModified: out.LastModified?.getTime() ?? 0,
        etag: out.ETag ?? "",
      };
    } catch (error) {
      if (isStatus(error, 404)) return undefined;
      throw translate(error, this.#bucket, this.#prefix, key);
    }
  }

  async delete(key: string): Promise<void> {
    await this.#call(key, () =>
      this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) })),
    );
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += MAX_DELETE_BATCH) {
      const batch = keys.slice(i, i + MAX_DELETE_BATCH);
      const out = await this.#call(batch[0] ?? "", () =>
        this.#client.send(
          new DeleteObjectsCommand({
            Bucket: this.#bucket,
            Delete: { Objects: batch.map((k) => ({ Key: this.#key(k) })), Quiet: true },
          }),
        ),
      );
      const failed = out.Errors?.[0];
      if (failed) {
        throw new StoreUnavailableError(`could not delete ${failed.Key}: ${failed.Code} ${failed.Message}`);
      }
    }
  }

  #key(key: string): string {
    assertValidKey(key);
    return this.#prefix + key;
  }

  async #read(key: string, range?: string): Promise<Uint8Array> {
    const out = await this.#call(key, () =>
      this.#client.send(
        new GetObjectCommand({
          Bucket: this.#bucket,
          Key: this.#key(key),
          ...(range ? { Range: range } : {}),
        }),
      ),
    );
    if (!out.Body) return new Uint8Array();
    return out.Body.transformToByteArray();
  }

  async #call<T>(key: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw translate(error, this.#bucket, this.#prefix, key);
    }
  }
}

function isStatus(error: unknown, status: number): boolean {
  return error instanceof S3ServiceException && error.$metadata.httpStatusCode === status;
}

function translate(error: unknown, bucket: string, prefix: string, key: string): Error {
  if (error instanceof S3ServiceException) {
    if (error.name === "NoSuchBucket") return new BucketNotFoundError(bucket, prefix + key, { cause: error });
    if (error.$metadata.httpStatusCode === 404 || error.name === "NoSuchKey") {
      return new ObjectNotFoundError(key, { cause: error });
    }
    if (error.name === DATA_FOLDER_FULL_S3_CODE)
      return new DataFolderFullError(error.message, { cause: error });
    return new StoreUnavailableError(`S3 refused the request for ${key}: ${error.name}: ${error.message}`, {
      cause: error,
    });
  }
  return new StoreUnavailableError(`S3 could not be reached for ${key}: ${String(error)}`, { cause: error });
}
