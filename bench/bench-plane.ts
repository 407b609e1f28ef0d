import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { loadSynthesizedEbb } from "../infra/local/ebb-synthesis-cache.ts";
import { startEmbeddedEbb } from "../infra/local/embedded-ebb.ts";
import { startLocalControlPlane, type LocalControlPlane } from "../infra/local/local-control-plane.ts";
import { EbbClient } from "../shared/client/ebb-client.ts";
import { bearerAuth } from "../shared/client/request-signer.ts";
import { createS3Client } from "../shared/store/aws-clients.ts";
import type { ObjectStore } from "../shared/object-store/object-store.ts";
import { S3ObjectStore } from "../shared/object-store/s3-object-store.ts";

/** The local runtime in memory with a landing folder, as the benchmarks drive it through the API. */
export interface BenchPlane {
  readonly plane: LocalControlPlane;
  readonly client: EbbClient;
  readonly landing: string;
  /**
   * A landing location in the S3 stand-in (`s3://…/landing/<name>/`), as sources are on AWS, so that
   * their listings and reads are S3 requests too; `store` writes files there.
   */
  s3Landing(name: string): { readonly uri: string; readonly store: ObjectStore };
  /** Stops the control plane and the stand-ins, and removes the landing folder. */
  close(): Promise<void>;
}

export async function startBenchPlane(
  landingPrefix: string,
  options: { readonly uiAssets?: string } = {},
): Promise<BenchPlane> {
  const landing = await mkdtemp(path.join(os.tmpdir(), landingPrefix));
  const { aws, storage } = await startEmbeddedEbb({ dataDir: "memory" });
  const plane = await startLocalControlPlane({
    endpoints: aws.endpoints,
    storage,
    ebb: await loadSynthesizedEbb(),
    schedules: false,
    localRoots: [landing],
    ...options,
  });
  return {
    plane,
    client: new EbbClient({ endpoint: plane.endpoint, auth: bearerAuth(plane.token) }),
    landing,
    s3Landing: (name) => ({
      uri: `s3://${storage.bucket}/landing/${name}/`,
      store: new S3ObjectStore({
        client: createS3Client(aws.endpoints),
        bucket: storage.bucket,
        prefix: `landing/${name}/`,
      }),
    }),
    close: async () => {
      await plane.stop();
      await aws.stop();
      await rm(landing, { recursive: true, force: true });
    },
  };
}
