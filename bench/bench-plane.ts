import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { loadSynthesizedEbb } from "../infra/local/ebb-synthesis-cache.ts";
import { startEmbeddedEbb } from "../infra/local/embedded-ebb.ts";
import { startLocalControlPlane, type LocalControlPlane } from "../infra/local/local-control-plane.ts";
import { EbbClient } from "../shared/client/ebb-client.ts";
import { bearerAuth } from "../shared/client/request-signer.ts";

/** The local runtime in memory with a landing folder, as the benchmarks drive it through the API. */
export interface BenchPlane {
  readonly plane: LocalControlPlane;
  readonly client: EbbClient;
  readonly landing: string;
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
    close: async () => {
      await plane.stop();
      await aws.stop();
      await rm(landing, { recursive: true, force: true });
    },
  };
}
