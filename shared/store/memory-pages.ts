import { InvalidPageTokenError } from "./errors.ts";
import { assertPageSize, type Page, type SortOrder } from "./query-pages.ts";

/**
 * Paging for the in-memory adapters, with the DynamoDB adapters' semantics (query-pages.ts): pages in
 * both directions, `prevPageToken` whenever a page was reached through a token, and tokens bound to
 * the listing (`scope`) that issued them. A token may carry a value (an event query) back to its
 * listing.
 */

interface MemoryToken<Carried> {
  readonly s: string;
  readonly d: "next" | "prev";
  readonly k: string;
  readonly c?: Carried;
}

export interface MemoryPageRequest {
  readonly limit: number;
  readonly pageToken?: string;
  readonly order: SortOrder;
  readonly scope: string;
}

/** What a token carried, without paging on it (to learn the query before listing). */
export function carriedBy<Carried>(pageToken: string, scope: string): Carried | undefined {
  return readToken<Carried>(pageToken, scope).c;
}

/** One page of `items`, which are sorted ascending by `keyOf`. */
export function memoryPage<Item, Carried = never>(
  items: readonly Item[],
  keyOf: (item: Item) => string,
  request: MemoryPageRequest,
  carry?: Carried,
): Page<Item> {
  assertPageSize(request.limit);
  const token =
    request.pageToken === undefined ? undefined : readToken<Carried>(request.pageToken, request.scope);
  const ascending = request.order === "asc";
  const ordered = ascending ? [...items] : [...items].reverse();
  const precedes = (a: string, b: string) => (ascending ? a < b : a > b);

  let page: Item[];
  let more: boolean;
  if (token?.d === "prev") {
    const preceding = ordered.filter((item) => precedes(keyOf(item), token.k));
    page = preceding.slice(-request.limit);
    more = preceding.length > request.limit;
  } else {
    const following = token ? ordered.filter((item) => precedes(token.k, keyOf(item))) : ordered;
    page = following.slice(0, request.limit);
    more = following.length > request.limit;
  }

  const at = (d: "next" | "prev", item: Item | undefined) =>
    item === undefined
      ? undefined
      : writeToken<Carried>({
          s: request.scope,
          d,
          k: keyOf(item),
          ...(carry !== undefined ? { c: carry } : {}),
        });
  const backward = token?.d === "prev";
  const next = backward || more ? at("next", page[page.length - 1]) : undefined;
  const prev = backward ? (more ? at("prev", page[0]) : undefined) : token ? at("prev", page[0]) : undefined;
  return { items: page, ...(next ? { nextPageToken: next } : {}), ...(prev ? { prevPageToken: prev } : {}) };
}

function writeToken<Carried>(token: MemoryToken<Carried>): string {
  return Buffer.from(JSON.stringify(token)).toString("base64url");
}

function readToken<Carried>(text: string, scope: string): MemoryToken<Carried> {
  try {
    const token = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as MemoryToken<Carried> | null;
    if (
      token !== null &&
      token.s === scope &&
      (token.d === "next" || token.d === "prev") &&
      typeof token.k === "string"
    ) {
      return token;
    }
  } catch {
    // fall through
  }
  throw new InvalidPageTokenError(text);
}
