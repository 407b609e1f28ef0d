import { DynamoCheckpointsRepository } from "../../../shared/store/dynamo-checkpoints-repository.ts";
import { DynamoEventLogRepository } from "../../../shared/store/dynamo-event-log-repository.ts";
import { DynamoPipelinesRepository } from "../../../shared/store/dynamo-pipelines-repository.ts";
import { DynamoUpdatesRepository } from "../../../shared/store/dynamo-updates-repository.ts";
import { testAws, testDocumentClient, testObjectStore, uniquePrefix } from "../aws.ts";
import type { HarnessPorts, TestClock } from "./rewind-harness.ts";

/**
 * The harness's stores on the AWS stand-ins (or LocalStack): S3 for tables, state and landing files
 * under a prefix of their own, and Ebb's DynamoDB tables for checkpoints, events, updates and
 * pipelines, every repository on the test clock.
 */
export function awsPorts(clock: TestClock): HarnessPorts {
  const { storage } = testAws();
  const client = testDocumentClient();
  const prefix = uniquePrefix("rewind");
  const now = clock.now;
  return {
    store: testObjectStore(`${prefix}pipeline/`),
    landing: testObjectStore(`${prefix}landing/`),
    checkpoints: new DynamoCheckpointsRepository({
      client,
      tableName: storage.checkpointsTable,
      pipelinesTableName: storage.pipelinesTable,
      now,
    }),
    events: new DynamoEventLogRepository({ client, tableName: storage.eventLogTable, now }),
    updates: new DynamoUpdatesRepository({ client, tableName: storage.updatesTable, now }),
    pipelines: new DynamoPipelinesRepository({ client, tableName: storage.pipelinesTable, now }),
  };
}
