import {
  BatchGetCommand,
  BatchWriteCommand,
  GetCommand,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
  type GetCommandOutput,
} from "@aws-sdk/lib-dynamodb";
import type { PipelineDefinition } from "../pipeline/definition-schema.ts";
import { DEFINITION_ITEM, KEY, toDefinitionVersion, versionKey } from "./dynamo-pipeline-items.ts";
import { batchWriteAll, request } from "./dynamo-requests.ts";
import { DefinitionVersionNotFoundError } from "./errors.ts";
import { storedDefinitionJson, type DefinitionVersion } from "./pipelines-repository.ts";

/**
 * A pipeline's definition versions on the Pipelines table, one `<pipelineId>#v<version>` item each:
 * written inside the pipeline's create or edit transaction, read one at a time or all in batches
 * (the table has no sort key to Query by), deleted after the pipeline item.
 */

/** BatchGetItem's limit. */
const BATCH_GET_SIZE = 100;
/** BatchWriteItem's limit. */
const BATCH_WRITE_SIZE = 25;

export class DynamoDefinitionVersions {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** The item of one version, or `DefinitionTooLargeError`. */
  item(pipelineId: string, version: number, definition: PipelineDefinition, now: number) {
    const definitionJson = storedDefinitionJson(definition);
    return {
      [KEY]: versionKey(pipelineId, version),
      itemType: DEFINITION_ITEM,
      version,
      definitionJson,
      createdAt: now,
    };
  }

  async get(pipelineId: string, version: number): Promise<DefinitionVersion> {
    const output: GetCommandOutput = await request(() =>
      this.client.send(
        new GetCommand({
          TableName: this.table,
          Key: { [KEY]: versionKey(pipelineId, version) },
          ConsistentRead: true,
        }),
      ),
    );
    if (!output.Item) throw new DefinitionVersionNotFoundError(pipelineId, version);
    return toDefinitionVersion(pipelineId, output.Item);
  }

  /** Versions 1 to `current`, oldest first: one BatchGetItem per hundred. */
  async list(pipelineId: string, current: number): Promise<DefinitionVersion[]> {
    const items: Record<string, unknown>[] = [];
    for (const keys of batches(pipelineId, current, BATCH_GET_SIZE)) {
      let pending: Record<string, unknown>[] = keys;
      while (pending.length > 0) {
        const batch = pending;
        const output: BatchGetCommandOutput = await request(() =>
          this.client.send(
            new BatchGetCommand({ RequestItems: { [this.table]: { Keys: batch, ConsistentRead: true } } }),
          ),
        );
        items.push(...(output.Responses?.[this.table] ?? []));
        pending = output.UnprocessedKeys?.[this.table]?.Keys ?? [];
      }
    }
    const versions = items
      .map((item) => toDefinitionVersion(pipelineId, item))
      .sort((a, b) => a.version - b.version);
    const gap = versions.findIndex((v, i) => v.version !== i + 1);
    if (gap >= 0 || versions.length < current)
      throw new DefinitionVersionNotFoundError(pipelineId, gap >= 0 ? gap + 1 : versions.length + 1);
    return versions;
  }

  /** Deletes versions 1 to `current`. */
  async deleteAll(pipelineId: string, current: number): Promise<void> {
    for (const keys of batches(pipelineId, current, BATCH_WRITE_SIZE)) {
      const items = keys.map((Key) => ({ DeleteRequest: { Key } }));
      await batchWriteAll(`definition version deletion(s) of ${this.table}`, items, async (batch) => {
        const output = await this.client.send(
          new BatchWriteCommand({ RequestItems: { [this.table]: batch } }),
        );
        return { unprocessed: output.UnprocessedItems?.[this.table] as typeof batch | undefined };
      });
    }
  }
}

/** The keys of versions 1 to `current`, `size` at a time. */
function batches(pipelineId: string, current: number, size: number): Record<string, string>[][] {
  const keys = Array.from({ length: current }, (_, i) => ({ [KEY]: versionKey(pipelineId, i + 1) }));
  return Array.from({ length: Math.ceil(current / size) }, (_, i) => keys.slice(i * size, (i + 1) * size));
}
