import { S3Client } from "@aws-sdk/client-s3";

/**
 * Counts the AWS SDK requests made in this process, by "Service Command" (`S3 GetObjectCommand`,
 * `DynamoDBDocument GetCommand`): every client (S3, DynamoDB, Step Functions) inherits `send` from
 * one base class, which is wrapped once. For the cost benchmark and the tests that hold Ebb to its
 * request budget; the local runtime's functions run in process, so their requests are all seen.
 */
export class RequestCounter {
  static #installed: RequestCounter | undefined;
  #counts = new Map<string, number>();

  /** The process's counter, wrapping `send` on first use. */
  static install(): RequestCounter {
    if (RequestCounter.#installed) return RequestCounter.#installed;
    const counter = new RequestCounter();
    type Named = { constructor: { name: string } };
    const base = Object.getPrototypeOf(S3Client.prototype) as {
      send: (this: Named, command: Named, ...rest: unknown[]) => unknown;
    };
    const send = base.send;
    base.send = function (this: Named, command: Named, ...rest: unknown[]) {
      const key = `${this.constructor.name.replace(/Client$/, "")} ${command.constructor.name}`;
      counter.#counts.set(key, (counter.#counts.get(key) ?? 0) + 1);
      return send.call(this, command, ...rest);
    };
    return (RequestCounter.#installed = counter);
  }

  /** The requests counted since the last `take`, and a fresh count from here on. */
  take(): Map<string, number> {
    const counted = this.#counts;
    this.#counts = new Map();
    return counted;
  }
}

/** The requests of one service (`S3`, `DynamoDB` — the document client included). */
export function requestsOf(counts: ReadonlyMap<string, number>, service: string): number {
  let n = 0;
  for (const [key, count] of counts) if (key.split(" ")[0]!.startsWith(service)) n += count;
  return n;
}
