import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";
import { schemaErrors } from "../../support/lifecycle-event-schemas.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";

/**
 * Lifecycle events are delivered at least once (docs/events.md "At least once"), through the HTTP API
 * on the local runtime: an event claimed and never delivered — here the webhook refused every attempt,
 * which leaves the outbox as a crash between claim and send does — reaches the webhook when the
 * pipeline's next update starts, with its own event id; and a stop tells the webhook "Update Canceled".
 */

describe("lifecycle events at least once", () => {
  let webhook: WebhookReceiver;
  let cp: TestControlPlane;
  let pipelineId: string;

  beforeAll(async () => {
    webhook = await startWebhookReceiver();
    cp = await startTestControlPlane({ webhook: webhook.url });
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "lifecycle outbox",
      catalog: "lifecycle",
      schema: "outbox",
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "orders",
            flows: [
              {
                name: "ingest",
                source: { type: "auto_loader", path: cp.landing, format: "json", schema: { id: "BIGINT" } },
                options: { max_files_per_batch: 1 },
                sql: "SELECT id FROM source",
              },
            ],
          },
        ],
      },
    }));
  });
  afterAll(async () => {
    await cp?.close();
    await webhook?.close();
  });

  const kinds = (updateId: string) =>
    webhook.received.filter((e) => e.detail.update_id === updateId).map((e) => e["detail-type"]);
  const until = async (what: string, check: () => boolean) => {
    const deadline = Date.now() + 15_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`waited in vain for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it("sends an event claimed and not delivered when the next update starts, once", async () => {
    await cp.land("1.json", [{ id: 1 }]);
    webhook.refused.add("Update Completed");
    const { update_id: first } = await cp.client.startUpdate(pipelineId);
    expect((await cp.client.waitForUpdate(pipelineId, first, { intervalMs: 100 })).state).toBe("COMPLETED");
    // The webhook's three attempts (about 1.5 s) are spent: given up, the claim stays in the outbox.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(kinds(first)).toEqual(["Update Started"]);

    webhook.refused.clear();
    const { update_id: second } = await cp.client.startUpdate(pipelineId);
    await until("the first update's Update Completed", () => kinds(first).includes("Update Completed"));
    expect((await cp.client.waitForUpdate(pipelineId, second, { intervalMs: 100 })).state).toBe("COMPLETED");
    await until("the second update's end", () => kinds(second).includes("Update Completed"));
    const resent = webhook.received.find(
      (e) => e.detail.update_id === first && e["detail-type"] === "Update Completed",
    );
    expect(resent?.id).toBe(`${first}:update-completed`);
    // Delivered now: the update after does not send it again.
    const { update_id: third } = await cp.client.startUpdate(pipelineId);
    await cp.client.waitForUpdate(pipelineId, third, { intervalMs: 100 });
    await until("the third update's end", () => kinds(third).includes("Update Completed"));
    expect(kinds(first)).toEqual(["Update Started", "Update Completed"]);
  });

  it("tells the webhook of an update stopped through the API", async () => {
    for (let n = 10; n < 40; n++) await cp.land(`${n}.json`, [{ id: n }]);
    const { update_id } = await cp.client.startUpdate(pipelineId);
    await cp.client.stopPipeline(pipelineId);
    expect((await cp.client.getUpdate(pipelineId, update_id)).update.state).toBe("CANCELED");
    await until("Update Canceled", () => kinds(update_id).includes("Update Canceled"));
    const canceled = webhook.received.find(
      (e) => e.detail.update_id === update_id && e["detail-type"] === "Update Canceled",
    )!;
    expect(canceled.detail).toMatchObject({
      event_id: `${update_id}:update-canceled`,
      pipeline_name: "lifecycle outbox",
      update_kind: "RUN",
      message: "the update was stopped through the API",
    });
    expect(schemaErrors(canceled as never)).toEqual([]);
    expect(kinds(update_id)).not.toContain("Update Completed");
  });
});
