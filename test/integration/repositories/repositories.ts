import { DynamoCheckpointsRepository } from "../../../shared/store/dynamo-checkpoints-repository.ts";
import { DynamoEventLogRepository } from "../../../shared/store/dynamo-event-log-repository.ts";
import { DynamoPipelinesRepository } from "../../../shared/store/dynamo-pipelines-repository.ts";
import { DynamoUpdatesRepository } from "../../../shared/store/dynamo-updates-repository.ts";
import { testAws, testDocumentClient } from "../../support/aws.ts";

/**
 * The repositories on the run's DynamoDB (tables provisioned from the synthesized stack by
 * global-setup.ts). Tests share the tables, so each one works on ids no other test uses.
 */
export function pipelinesRepository(now?: () => number): DynamoPipelinesRepository {
  return new DynamoPipelinesRepository({
    client: testDocumentClient(),
    tableName: testAws().storage.pipelinesTable,
    ...(now ? { now } : {}),
  });
}

export function updatesRepository(now?: () => number): DynamoUpdatesRepository {
  return new DynamoUpdatesRepository({
    client: testDocumentClient(),
    tableName: testAws().storage.updatesTable,
    ...(now ? { now } : {}),
  });
}

export function checkpointsRepository(now?: () => number): DynamoCheckpointsRepository {
  return new DynamoCheckpointsRepository({
    client: testDocumentClient(),
    tableName: testAws().storage.checkpointsTable,
    pipelinesTableName: testAws().storage.pipelinesTable,
    ...(now ? { now } : {}),
  });
}

export function eventLogRepository(now?: () => number): DynamoEventLogRepository {
  return new DynamoEventLogRepository({
    client: testDocumentClient(),
    tableName: testAws().storage.eventLogTable,
    ...(now ? { now } : {}),
  });
}
