/** The part of s3rver 3.x (which ships no types) that the embedded S3 uses. */
declare module "s3rver" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  export interface S3rverOptions {
    /** Folder holding the buckets. */
    directory: string;
    silent?: boolean;
    /** Off: we only ever use path-style URLs. */
    vhostBuckets?: boolean;
    resetOnClose?: boolean;
  }

  /** Object metadata as s3rver stores it; `etag` is quoted. */
  export type S3rverMetadata = Record<string, string> & { etag: string; "content-length": number | string };

  export interface ListObjectsOptions {
    prefix?: string;
    startAfter?: string;
    delimiter?: string;
    maxKeys?: number;
  }

  /** What the listing controller reads of each listed object. */
  export interface ListedObject {
    key: string;
    metadata: S3rverMetadata;
    size: number;
    lastModifiedDate: Date;
  }

  export interface FilesystemStore {
    getBucketPath(bucket: string): string;
    getBucket(bucket: string): Promise<unknown>;
    /** Rejects with an ENOENT error when the object does not exist. */
    getMetadata(bucket: string, key: string): Promise<S3rverMetadata>;
    listObjects(
      bucket: string,
      options: ListObjectsOptions,
    ): Promise<{ objects: ListedObject[]; commonPrefixes: string[]; isTruncated: boolean }>;
  }

  class S3rver {
    constructor(options: S3rverOptions);
    readonly store: FilesystemStore;
    /** The Koa request handler. */
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  }
  export default S3rver;
}

/** s3rver's one account, whose key pairs it accepts. */
declare module "s3rver/lib/models/account.js" {
  interface AWSAccount {
    createKeyPair(accessKeyId: string, secretAccessKey: string): void;
    revokeAccessKey(accessKeyId: string): void;
  }
  export const DUMMY_ACCOUNT: AWSAccount;
}

/** s3rver's error, which its middleware renders as S3's XML error with the code's status. */
declare module "s3rver/lib/models/error.js" {
  class S3Error extends Error {
    constructor(code: string, message: string, detail?: Record<string, string>);
    readonly code: string;
    readonly status: number;
    expose: boolean;
  }
  export default S3Error;
}
