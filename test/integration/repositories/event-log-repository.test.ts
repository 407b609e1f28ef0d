import { randomUUID } from "node:crypto";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { eventLogRepository } from "./repositories.ts";
import { testAws, testDocumentClient } from "../../support/aws.ts";
import type { PipelineEvent } from "../../../shared/store/event-log-repository.ts";
import {
  DAY,
  T0,
  event,
  eventLogRepositoryContract,
} from "../../unit/store/event-log-repository-contract.ts";

eventLogRepositoryContract("DynamoEventLogRepository", eventLogRepository);

describe("DynamoEventLogRepository", () => {
  it("sets the TTL attribute from the event's retention, 30 days by default", async () => {
    const repository = eventLogRepository(() => T0);
    const pipelineId = randomUUID();
    const normal = await repository.append(event(pipelineId, T0));
    const point = await repository.append(
      event(pipelineId, T0, { event_type: "rewind_summary", retentionMs: 7 * DAY }),
    );
    const expiresAt = async (e: PipelineEvent) => {
      const output = await testDocumentClient().send(
        new GetCommand({
          TableName: testAws().storage.eventLogTable,
          Key: { pipelineId, sk: `${e.timestamp}#${e.id}` },
        }),
      );
      return output.Item?.["expiresAt"];
    };
    expect(await expiresAt(normal)).toBe((T0 + 30 * DAY) / 1000);
    expect(await expiresAt(point)).toBe((T0 + 7 * DAY) / 1000);
  });
});
