import { S3Client } from "@aws-sdk/client-s3";

/**
 * DynamoDB request units, as on-demand mode bills them, for the cost benchmark: a write is one WRU
 * per 1 KB of the item written, a read one RRU per 4 KB read (half for an eventually consistent
 * read; a Query's items are summed before rounding), and a transaction's every item (condition
 * checks included) twice. Sizes are the items' JSON length (DynamoDB's measure, attribute names plus
 * values, is close to it); an UpdateItem is sized by what it writes (key and values), unless it
 * returns the new item.
 */
export class DynamoCapacity {
  static #installed: DynamoCapacity | undefined;
  #reads = 0;
  #writes = 0;

  /** The process's tally, wrapping every client's `send` on first use. */
  static install(): DynamoCapacity {
    if (DynamoCapacity.#installed) return DynamoCapacity.#installed;
    const tally = new DynamoCapacity();
    type Command = { constructor: { name: string }; input?: unknown };
    type Send = (this: { constructor: { name: string } }, command: Command, ...rest: unknown[]) => unknown;
    const base = Object.getPrototypeOf(S3Client.prototype) as { send: Send };
    const send = base.send;
    base.send = function (command, ...rest) {
      const sent = send.call(this, command, ...rest);
      if (this.constructor.name.startsWith("DynamoDB") && sent instanceof Promise) {
        void sent.then(
          (output: unknown) =>
            tally.#count(command.constructor.name, command.input as Input, output as Output),
          () => undefined,
        );
      }
      return sent;
    };
    return (DynamoCapacity.#installed = tally);
  }

  /** Read and write request units since the last `take`. */
  take(): { readonly reads: number; readonly writes: number } {
    const taken = { reads: this.#reads, writes: this.#writes };
    this.#reads = 0;
    this.#writes = 0;
    return taken;
  }

  #count(command: string, input: Input, output: Output): void {
    const readUnits = (bytes: number) =>
      Math.max(1, Math.ceil(bytes / 4096)) * (input.ConsistentRead ? 1 : 0.5);
    switch (command) {
      case "GetCommand":
        this.#reads += readUnits(size(output.Item));
        break;
      case "QueryCommand":
      case "ScanCommand":
        this.#reads += readUnits((output.Items ?? []).reduce((sum: number, item) => sum + size(item), 0));
        break;
      case "BatchGetCommand":
        for (const items of Object.values(output.Responses ?? {}))
          for (const item of items) this.#reads += readUnits(size(item));
        break;
      case "PutCommand":
        this.#writes += writeUnits(size(input.Item));
        break;
      case "UpdateCommand":
        this.#writes += writeUnits(updateSize(input, output.Attributes));
        break;
      case "DeleteCommand":
        this.#writes += 1;
        break;
      case "BatchWriteCommand":
        for (const requests of Object.values(input.RequestItems ?? {}))
          for (const request of requests as { PutRequest?: { Item: unknown } }[])
            this.#writes += request.PutRequest ? writeUnits(size(request.PutRequest.Item)) : 1;
        break;
      case "TransactWriteCommand":
        for (const item of input.TransactItems ?? []) {
          const entry = item as { Put?: { Item: unknown }; Update?: Input };
          const bytes = entry.Put ? size(entry.Put.Item) : entry.Update ? updateSize(entry.Update) : 0;
          this.#writes += 2 * writeUnits(bytes);
        }
        break;
      case "TransactGetCommand":
        for (const item of output.Responses ?? []) this.#reads += 2 * readUnits(size(item?.Item));
        break;
    }
  }
}

interface Input {
  readonly ConsistentRead?: boolean;
  readonly Item?: unknown;
  readonly Key?: unknown;
  readonly ExpressionAttributeValues?: unknown;
  readonly RequestItems?: Record<string, unknown[]>;
  readonly TransactItems?: unknown[];
}
interface Output {
  readonly Item?: unknown;
  readonly Items?: unknown[];
  readonly Attributes?: unknown;
  readonly Responses?: Record<string, unknown[]> & { Item?: unknown }[];
}

function size(item: unknown): number {
  return item === undefined ? 0 : JSON.stringify(item).length;
}

function writeUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / 1024));
}

function updateSize(input: Input, returned?: unknown): number {
  return returned !== undefined ? size(returned) : size(input.Key) + size(input.ExpressionAttributeValues);
}
