import { afterAll, beforeAll, describe, expect, it } from "vitest";
import path from "node:path";
import { ingestPipeline, startTestControlPlane, type TestControlPlane } from "../support/control-plane.ts";
import { PYTHON, requireInstalled, runProgram } from "./client-processes.ts";

/**
 * The Databricks Python SDK's `list_pipelines(filter="name LIKE '…'")` against the local runtime:
 * the pipelines whose name matches, across pages, and Databricks' `notebook='…'` refused by its code.
 */
describe("the Databricks Python SDK's pipeline filter", () => {
  let cp: TestControlPlane;
  const tag = `sdkfilter${Math.random().toString(36).slice(2, 8)}`;
  const ids: string[] = [];

  beforeAll(async () => {
    cp = await startTestControlPlane();
    for (const name of [`${tag} orders`, `${tag} Orders daily`, `${tag} clicks`])
      ids.push(
        (
          await cp.client.createPipeline(
            ingestPipeline({
              name,
              catalog: tag,
              schema: name.toLowerCase().replaceAll(" ", "_"),
              path: cp.landing,
            }),
          )
        ).pipeline_id,
      );
  });
  afterAll(async () => {
    for (const id of ids) await cp.client.deletePipeline(id, true);
    await cp?.close();
  });

  it("lists by name LIKE, % as any characters, in any case, one per page; refuses notebook=", async () => {
    const out = await runProgram(
      requireInstalled(PYTHON),
      [
        path.join(import.meta.dirname, "python", "seed_steps.py"),
        "filtered_pipelines",
        JSON.stringify({ pattern: `${tag.toUpperCase()} %ORDERS%`, page_size: 1 }),
      ],
      { DATABRICKS_HOST: cp.plane.endpoint, DATABRICKS_TOKEN: cp.plane.token },
    );
    const line = out.split("\n").find((l) => l.startsWith("RESULT "))!;
    expect(JSON.parse(line.slice("RESULT ".length))).toEqual({
      names: [`${tag} Orders daily`, `${tag} orders`],
      refused: "UNSUPPORTED_PIPELINE_FILTER",
    });
  });
});
