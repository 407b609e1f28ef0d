import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";
import { schemaErrors } from "../../support/lifecycle-event-schemas.ts";
import {
  startWebhookReceiver,
  type DeliveredEvent as Delivered,
  type WebhookReceiver,
} from "../../support/webhook-receiver.ts";

/**
 * Lifecycle events on the local runtime (docs/events.md): a local HTTP server subscribed as the
 * webhook sees, through the HTTP API, each update's start and end, a dry run's plan, a rewind's
 * completion with each table's restored version and the point, a full refresh, a checkpoint reset
 * and a failed update with its error code — each event once, each valid against its published
 * JSON Schema.
 */

describe("lifecycle events to a local webhook", () => {
  let webhook: WebhookReceiver;
  let cp: TestControlPlane;
  let pipelineId: string;

  beforeAll(async () => {
    webhook = await startWebhookReceiver();
    cp = await startTestControlPlane({ webhook: webhook.url });
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "lifecycle events",
      catalog: "lifecycle",
      schema: "events",
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "orders",
            flows: [
              {
                name: "ingest",
                source: {
                  type: "auto_loader",
                  path: cp.landing,
                  format: "json",
                  schema: { id: "BIGINT", amount: "BIGINT" },
                },
                sql: "SELECT id, amount FROM source",
              },
            ],
            expectations: [{ name: "positive_amount", condition: "amount > 0", on_violation: "fail" }],
          },
        ],
      },
    }));
  });
  afterAll(async () => {
    await cp?.close();
    await webhook?.close();
  });

  /** Starts an update, waits for its end, and for its events to reach the webhook. */
  async function run(body: Record<string, unknown>, endEvent: string) {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 100 });
    const deadline = Date.now() + 10_000;
    while (!eventsOf(update_id).some((e) => e["detail-type"] === endEvent)) {
      if (Date.now() > deadline)
        throw new Error(`no ${endEvent} for update ${update_id}: ${kinds(update_id)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return { update, events: eventsOf(update_id) };
  }
  const eventsOf = (updateId: string) => webhook.received.filter((e) => e.detail.update_id === updateId);
  const kinds = (updateId: string) => eventsOf(updateId).map((e) => e["detail-type"]);
  const ofType = (events: readonly Delivered[], type: string) =>
    events.find((e) => e["detail-type"] === type)?.detail;

  it("tells the webhook of updates, a rewind with each table's restored version and the point, resets and a failure", async () => {
    await cp.land("1.json", [{ id: 1, amount: 5 }]);
    const first = await run({}, "Update Completed");
    expect(first.update.state).toBe("COMPLETED");
    expect(kinds(first.update.update_id)).toEqual(["Update Started", "Update Completed"]);
    expect(ofType(first.events, "Update Started")).toMatchObject({
      pipeline_id: pipelineId,
      pipeline_name: "lifecycle events",
      update_kind: "RUN",
      cause: "USER_ACTION",
      cut_id: null,
    });
    const point = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!;
    const versionAtPoint = point.datasets.find(
      (d) => d.identifier === "lifecycle.events.orders",
    )!.table_version;
    const at = new Date(Date.parse(point.timestamp)).toISOString();

    await cp.land("2.json", [{ id: 2, amount: 6 }]);
    expect((await run({}, "Update Completed")).update.state).toBe("COMPLETED");

    const dryRun = await run(
      { rewind_spec: { rewind_point_id: point.rewind_point_id, dry_run: true } },
      "Update Completed",
    );
    expect(kinds(dryRun.update.update_id)).toEqual(["Update Started", "Rewind Planned", "Update Completed"]);
    expect(ofType(dryRun.events, "Rewind Planned")).toMatchObject({
      rewind_point: { rewind_point_id: point.rewind_point_id, timestamp: at },
      tables: [
        { dataset: "orders", table: "lifecycle.events.orders", action: "RESTORE", version: versionAtPoint },
      ],
      cut_id: null,
    });

    const rewind = await run({ rewind_spec: { rewind_point_id: point.rewind_point_id } }, "Update Completed");
    expect(rewind.update.state).toBe("COMPLETED");
    expect(kinds(rewind.update.update_id)).toEqual([
      "Update Started",
      "Rewind Completed",
      "Update Completed",
    ]);
    expect(ofType(rewind.events, "Update Started")).toMatchObject({ update_kind: "REWIND" });
    const restored = ofType(rewind.events, "Rewind Completed")!;
    expect(restored).toMatchObject({
      rewind_point: { rewind_point_id: point.rewind_point_id, timestamp: at },
      tables: [
        { dataset: "orders", table: "lifecycle.events.orders", action: "RESTORE", version: versionAtPoint },
      ],
    });
    // The RESTORE commit is the table's newest version, and says which version it restored.
    const [latest] = (await cp.client.history("lifecycle.events.orders")).history;
    expect(latest).toMatchObject({ operation: "RESTORE" });
    expect((restored["tables"] as { restore_commit_version: number }[])[0]!.restore_commit_version).toBe(
      latest!["version"],
    );

    const refresh = await run({ full_refresh: true }, "Update Completed");
    expect(kinds(refresh.update.update_id)).toEqual(["Update Started", "Full Refresh", "Update Completed"]);
    expect(ofType(refresh.events, "Full Refresh")).toMatchObject({
      refresh: "FULL",
      tables: [{ dataset: "orders", table: "lifecycle.events.orders" }],
    });

    const reset = await run({ reset_checkpoint_selection: ["ingest"] }, "Update Completed");
    expect(kinds(reset.update.update_id)).toEqual(["Update Started", "Checkpoint Reset", "Update Completed"]);
    expect(ofType(reset.events, "Checkpoint Reset")).toMatchObject({ flows: ["ingest"] });

    await cp.land("3.json", [{ id: 3, amount: -3 }]);
    const failed = await run({}, "Update Failed");
    expect(failed.update.state).toBe("FAILED");
    expect(kinds(failed.update.update_id)).toEqual(["Update Started", "Update Failed"]);
    expect(ofType(failed.events, "Update Failed")).toMatchObject({
      update_kind: "RUN",
      error_code: "EXPECTATION_VIOLATION",
      message: failed.update.error?.message,
    });

    // Once per occurrence, each valid against its published schema, in EventBridge's envelope.
    expect(new Set(webhook.received.map((e) => e.id)).size).toBe(webhook.received.length);
    for (const event of webhook.received) {
      expect(event.source).toBe("ebb");
      expect(event.id).toBe(event.detail["event_id"]);
      expect(schemaErrors(event), event["detail-type"]).toEqual([]);
    }
  });
});
