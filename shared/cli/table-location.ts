import path from "node:path";
import { createS3Client, endpointsFromEnv } from "../store/aws-clients.ts";
import { LocalObjectStore } from "../object-store/local-object-store.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import { S3ObjectStore } from "../object-store/s3-object-store.ts";

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

const TABLE_NAME = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * The `catalog.schema.table` name of a pipeline's table, when `location` names one: the name itself,
 * or its folder in Ebb's bucket (`s3://$EBB_BUCKET/tables/<catalog>/<schema>/<table>/`).
 */
export function pipelineTableName(
  location: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (TABLE_NAME.test(location)) return location;
  const s3 = S3_URI.exec(location);
  if (!s3 || env["EBB_BUCKET"] === undefined || s3[1] !== env["EBB_BUCKET"]) return undefined;
  const parts = /^tables\/([^/]+)\/([^/]+)\/([^/]+)\/?$/.exec(s3[2] ?? "");
  return parts ? `${parts[1]}.${parts[2]}.${parts[3]}` : undefined;
}
