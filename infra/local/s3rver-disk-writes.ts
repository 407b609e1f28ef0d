import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, statfs, writeFile } from "node:fs/promises";
import path from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type S3rver from "s3rver";
import S3Error from "s3rver/lib/models/error.js";
import { DATA_FOLDER_FULL_S3_CODE } from "../../shared/object-store/errors.ts";

/** The store, seen as the bag of methods it is (the declared type covers only what the front reads). */
type Store = Record<string, unknown>;

/**
 * What s3rver's file store gets wrong when its disk fills: it pipes each upload into a file stream
 * with no 'error' listener, so `ENOSPC` is an uncaught exception that kills the embedded S3 (and its
 * promise settles when the bytes are read, not when they are written). Here the two streamed writes
 * (an object, a multipart part) run through `pipeline`, which settles on the file's own finish or
 * error, and every store call that fails for a full disk answers 503 DataFolderFull naming the
 * folder and its free space, so the update fails saying so and the stand-in keeps serving reads.
 * Writes stop short of the disk's last `CONTROL_PLANE_RESERVE_BYTES`, so that failure can be recorded.
 */
export function writeWithinDisk(s3rver: S3rver, directory: string): void {
  const store = s3rver.store as unknown as Store;
  const resourcePath = (store["getResourcePath"] as (...args: unknown[]) => string).bind(store);
  const putMetadata = (store["putMetadata"] as (...args: unknown[]) => Promise<void>).bind(store);

  const streamInto = async (file: string, content: Readable | Buffer) => {
    await mkdir(path.dirname(file), { recursive: true });
    const md5 = createHash("md5");
    let size = 0;
    // Room for this write: the disk's free space past the reserve, looked at again every MiB.
    let room = await roomFor(directory);
    let lookedAt = 0;
    const count = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        const take = async () => {
          if (size - lookedAt >= LOOK_AGAIN_BYTES) [room, lookedAt] = [await roomFor(directory), size];
          if (size - lookedAt + chunk.length > room) throw noRoom();
          md5.update(chunk);
          size += chunk.length;
          return chunk;
        };
        take().then((taken) => callback(null, taken), callback);
      },
    });
    const source = Buffer.isBuffer(content) ? [content] : content;
    await pipeline(source, count, createWriteStream(file));
    return { size, md5: md5.digest("hex") };
  };

  store["putObject"] = async (object: {
    bucket: string;
    key: string;
    content: Readable | Buffer;
    metadata: unknown;
  }) => {
    const written = await streamInto(resourcePath(object.bucket, object.key, "object"), object.content);
    await putMetadata(object.bucket, object.key, object.metadata, written.md5);
    return written;
  };

  store["putPart"] = async (bucket: string, uploadId: string, partNumber: number, content: Readable) => {
    const file = path.join(resourcePath(bucket, undefined, "uploads"), uploadId, String(partNumber));
    const written = await streamInto(file, content);
    await writeFile(`${file}.md5`, written.md5);
    return written;
  };

  const prototype = Object.getPrototypeOf(store) as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(prototype)) {
    const method = store[name];
    if (name === "constructor" || typeof method !== "function") continue;
    store[name] = (...args: unknown[]) => {
      const result = (method as (...a: unknown[]) => unknown).apply(store, args);
      // Only the asynchronous calls touch the disk; path helpers stay synchronous.
      if (!(result instanceof Promise)) return result;
      return result.catch(async (error: unknown) => {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
        throw await diskFull(directory);
      });
    };
  }
}

/**
 * The room the embedded S3 leaves to the rest of the data folder: DynamoDB Local's records and the
 * log. Data files fill a disk; a refused write must still be recorded (the update FAILED, its error
 * event), and DynamoDB Local on a full disk takes nothing, which left updates RUNNING in silence.
 */
export const CONTROL_PLANE_RESERVE_BYTES = 16 * 1024 * 1024;
const LOOK_AGAIN_BYTES = 1024 * 1024;

/** Bytes a write may still take in `directory`: its free space past the reserve. */
async function roomFor(directory: string): Promise<number> {
  const stats = await statfs(directory);
  return stats.bavail * stats.bsize - CONTROL_PLANE_RESERVE_BYTES;
}

function noRoom(): Error {
  return Object.assign(new Error("ENOSPC: the data folder's reserve reached"), { code: "ENOSPC" });
}

async function diskFull(directory: string): Promise<Error> {
  const free = await statfs(directory).then(
    (stats) => `${Math.floor((stats.bavail * stats.bsize) / 1024 / 1024)} MB free`,
    () => "free space unknown",
  );
  const reserve = CONTROL_PLANE_RESERVE_BYTES / 1024 / 1024;
  const error = new S3Error(
    DATA_FOLDER_FULL_S3_CODE,
    `the local runtime's data folder is full (${directory}: ${free}, of which it keeps ${reserve} MB for its own records): free space there (or start with another --data-dir), then run the update again`,
  );
  // A 503, as S3's own SlowDown; s3rver hides the message of a 5xx, but this one is the user's way out.
  return Object.assign(error, { status: 503, expose: true });
}
