import {
  QueryCommand,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
  type QueryCommandOutput,
} from "@aws-sdk/lib-dynamodb";
import { InvalidPageTokenError } from "./errors.ts";
import { request as dynamoRequest } from "./dynamo-requests.ts";

/**
 * Paging over a DynamoDB query in both directions (api.md: `next_page_token`, `prev_page_token`). A
 * token holds the key of the item a page ended (or began) at and the listing it belongs to, so a token
 * from one pipeline's listing is refused by another's.
 */

export type SortOrder = "asc" | "desc";

export interface PageRequest {
  /** Items per page. */
  readonly limit: number;
  /** A token from a previous page; the query's other parameters must be the same. */
  readonly pageToken?: string;
}

export interface Page<Item> {
  readonly items: readonly Item[];
  readonly nextPageToken?: string;
  readonly prevPageToken?: string;
}

export interface PagedQuery {
  /** The query without `Limit`, `ExclusiveStartKey` and `ScanIndexForward`. */
  readonly input: Omit<QueryCommandInput, "Limit" | "ExclusiveStartKey" | "ScanIndexForward">;
  /** The sort key's order in which pages are shown. */
  readonly order: SortOrder;
  /** The attributes of `LastEvaluatedKey` for this query (table keys, plus index keys on an index). */
  readonly keyAttributes: readonly string[];
  /** Names the listing (e.g. `updates/<pipelineId>/desc`); a token only works on the listing that issued it. */
  readonly scope: string;
}

type Key = Record<string, string | number>;
interface TokenBody {
  readonly s: string;
  readonly d: "next" | "prev";
  readonly k: Key;
}

/** One page of `query`. Filtered queries may need several DynamoDB calls to fill a page. */
export async function queryPage(
  client: DynamoDBDocumentClient,
  query: PagedQuery,
  request: PageRequest,
): Promise<Page<Record<string, unknown>>> {
  assertPageSize(request.limit);
  const token = request.pageToken === undefined ? undefined : decodeToken(request.pageToken, query);
  const backward = token?.d === "prev";
  const ascending = (query.order === "asc") !== backward;
  // One item beyond the page is fetched, so "more follow" is known rather than guessed: DynamoDB
  // returns a LastEvaluatedKey whenever it stops at Limit, even when nothing is left.
  const items: Record<string, unknown>[] = [];
  let startKey: Key | undefined = token?.k;
  let exhausted = false;
  while (!exhausted && items.length <= request.limit) {
    const input = {
      ...query.input,
      ScanIndexForward: ascending,
      Limit: request.limit + 1 - items.length,
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
    };
    const output: QueryCommandOutput = await dynamoRequest(() => client.send(new QueryCommand(input)));
    items.push(...(output.Items ?? []));
    startKey = output.LastEvaluatedKey as Key | undefined;
    exhausted = startKey === undefined;
  }
  const more = items.length > request.limit;
  items.length = Math.min(items.length, request.limit);
  if (backward) items.reverse();

  const first = items[0];
  const last = items[items.length - 1];
  const tokenAt = (direction: "next" | "prev", item: Record<string, unknown> | undefined) =>
    item === undefined ? undefined : encodeToken({ s: query.scope, d: direction, k: keyOf(item, query) });
  // Forward, more items may follow the last; backward, more may precede the first. The other side
  // exists whenever this page was reached from a token.
  const next = backward ? tokenAt("next", last) : more ? tokenAt("next", last) : undefined;
  const prev = backward
    ? more
      ? tokenAt("prev", first)
      : undefined
    : token
      ? tokenAt("prev", first)
      : undefined;
  return { items, ...(next ? { nextPageToken: next } : {}), ...(prev ? { prevPageToken: prev } : {}) };
}

function keyOf(item: Record<string, unknown>, query: PagedQuery): Key {
  return Object.fromEntries(query.keyAttributes.map((name) => [name, item[name] as string | number]));
}

function encodeToken(body: TokenBody): string {
  return Buffer.from(JSON.stringify(body)).toString("base64url");
}

function decodeToken(token: string, query: PagedQuery): TokenBody {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw new InvalidPageTokenError(token);
  }
  const candidate = body as Partial<TokenBody> | null;
  const key = candidate?.k;
  const valid =
    candidate !== null &&
    typeof candidate === "object" &&
    candidate.s === query.scope &&
    (candidate.d === "next" || candidate.d === "prev") &&
    key !== null &&
    typeof key === "object" &&
    Object.keys(key).length === query.keyAttributes.length &&
    query.keyAttributes.every((name) => typeof key[name] === "string" || typeof key[name] === "number");
  if (!valid) throw new InvalidPageTokenError(token);
  return candidate as TokenBody;
}

/** A page holds at least one item; callers validate `max_results` before it gets here. */
export function assertPageSize(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`page size must be a whole number of at least 1, not ${limit}`);
}
