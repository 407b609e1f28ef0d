/** The part of s3rver 3.x (which ships no types) that the embedded S3 uses. */
declare module "s3rver" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  interface S3rverOptions {
    /** Folder holding the buckets. */
    directory: string;
    silent?: boolean;
    /** Off: we only ever use path-style URLs. */
    vhostBuckets?: boolean;
    resetOnClose?: boolean;
  }

  /** Object metadata as s3rver stores it; `etag` is quoted, `content-length` a number. */
  type S3rverMetadata = Record<string, string> & { etag: string; "content-length": number };

  interface FilesystemStore {
    getBucket(bucket: string): Promise<unknown>;
    /** Rejects with an ENOENT error when the object does not exist. */
    getMetadata(bucket: string, key: string): Promise<S3rverMetadata>;
  }

  class S3rver {
    constructor(options: S3rverOptions);
    readonly store: FilesystemStore;
    /** The Koa request handler. */
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  }
  export default S3rver;
}
