import path from "node:path";
import { createS3Client, endpointsFromEnv } from "../store/aws-clients.ts";
import { LocalObjectStore } from "../store/local-object-store.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { S3ObjectStore } from "../store/s3-object-store.ts";

/**
 * Where a table lives, as a user types it: `s3://bucket/prefix` (through the AWS SDK, honouring
 * `AWS_ENDPOINT_URL_S3` so it works against the embedded runtime too) or a local folder.
 */
export interface TableLocation {
  readonly store: ObjectStore;
  /** What to call the table in messages. */
  readonly display: string;
}

const S3_URI = /^s3a?:\/\/([^/]+)\/?(.*)$/;

export function resolveTableLocation(location: string, env: NodeJS.ProcessEnv = process.env): TableLocation {
  const s3 = S3_URI.exec(location);
  if (s3) {
    const [, bucket, key] = s3 as unknown as [string, string, string];
    const prefix = key === "" || key.endsWith("/") ? key : `${key}/`;
    const client = createS3Client(endpointsFromEnv(env));
    return { store: new S3ObjectStore({ client, bucket, prefix }), display: location };
  }
  const folder = path.resolve(location.startsWith("file://") ? location.slice("file://".length) : location);
  return { store: new LocalObjectStore(folder), display: folder };
}
