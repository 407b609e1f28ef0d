import { matchesEventFilter, parseEventFilter, type EventFilter } from "../../api/event-filter.ts";
import { eventAnswer } from "../../api/event-answer.ts";
import { parseEventOrder, type EventOrder } from "../../api/event-order.ts";
import type { ListEventsQuery } from "../../api/request-schemas.ts";
import type { EventQuery, PipelineEvent } from "../../store/event-log-repository.ts";
import { requirePipeline, type ControlPlane } from "../plane/control-plane.ts";
import { InvalidParameterError } from "../../errors/coded-error.ts";

/**
 * `GET /pipelines/{id}/events` (api.md "Event log"). The filter's parts the event log indexes (time
 * range, one event type, levels, update, dataset) go to the store's query; the rest (`id`, several
 * event types, `details.rewind_summary.dry_run`) are applied to each page read. A page may therefore
 * hold fewer than `max_results` events while more follow: clients follow `next_page_token` until
 * there is none, as with Databricks. Tokens carry the filter and order: with a `page_token`, a
 * `filter` or `order_by` may be sent again (the Databricks Python SDK repeats them on every page) but
 * must be the token's.
 */

const DEFAULT_PAGE = 25;
/** Store pages read at most per request while they filter down to nothing. */
const MAX_READS_PER_PAGE = 20;

interface ListingToken {
  readonly filter: string;
  readonly order: EventOrder;
  readonly store: string;
}

export async function listEvents(plane: ControlPlane, pipelineId: string, query: ListEventsQuery) {
  await requirePipeline(plane, pipelineId);
  const resumed = query.page_token === undefined ? undefined : readToken(query.page_token);
  if (resumed) refuseChangedListing(resumed, query);
  const filterText = resumed?.filter ?? query.filter ?? "";
  const filter = parseEventFilter(filterText);
  const order = resumed?.order ?? parseEventOrder(query.order_by);
  const limit = query.max_results ?? DEFAULT_PAGE;

  if (filter.id !== undefined) {
    const event = await plane.events.get(pipelineId, filter.id);
    return { events: event && matchesEventFilter(event, filter) ? [eventAnswer(event)] : [] };
  }

  const storeQuery = toStoreQuery(filter, order);
  let storeToken = resumed?.store;
  let events: PipelineEvent[] = [];
  let next: string | undefined;
  let prev: string | undefined;
  for (let read = 0; read < MAX_READS_PER_PAGE; read++) {
    const page = await plane.events.query(pipelineId, storeQuery, {
      limit,
      ...(storeToken !== undefined ? { pageToken: storeToken } : {}),
    });
    events = page.items.filter((event) => matchesEventFilter(event, filter));
    next = page.nextPageToken;
    if (read === 0) prev = page.prevPageToken;
    if (events.length > 0 || next === undefined) break;
    storeToken = next;
  }
  const wrap = (store: string | undefined) => store && writeToken({ filter: filterText, order, store });
  const nextToken = wrap(next);
  const prevToken = wrap(prev);
  return {
    events: events.map(eventAnswer),
    ...(nextToken ? { next_page_token: nextToken } : {}),
    ...(prevToken ? { prev_page_token: prevToken } : {}),
  };
}

/** A page of one listing with another's filter or order would skip or repeat events: refused. */
function refuseChangedListing(resumed: ListingToken, query: ListEventsQuery): void {
  if (query.filter !== undefined && query.filter !== resumed.filter) {
    throw new InvalidParameterError(
      `page_token comes from the listing with filter ${JSON.stringify(resumed.filter)}, not ${JSON.stringify(query.filter)}: send the same filter (or none) with it, or start a new listing without page_token`,
    );
  }
  if (query.order_by !== undefined && parseEventOrder(query.order_by) !== resumed.order) {
    throw new InvalidParameterError(
      `page_token comes from the listing ordered "timestamp ${resumed.order}": send the same order_by (or none) with it, or start a new listing without page_token`,
    );
  }
}

function toStoreQuery(filter: EventFilter, order: EventOrder): EventQuery {
  return {
    range: filter.range,
    order,
    ...(filter.eventTypes?.length === 1 ? { eventType: filter.eventTypes[0] } : {}),
    ...(filter.levels ? { levels: filter.levels } : {}),
    ...(filter.updateId !== undefined ? { updateId: filter.updateId } : {}),
    ...(filter.datasetName !== undefined ? { datasetName: filter.datasetName } : {}),
  };
}

function writeToken(token: ListingToken): string {
  return Buffer.from(JSON.stringify(token)).toString("base64url");
}

function readToken(token: string): ListingToken {
  try {
    const parsed = JSON.parse(
      Buffer.from(token, "base64url").toString("utf8"),
    ) as Partial<ListingToken> | null;
    if (
      parsed &&
      typeof parsed.filter === "string" &&
      (parsed.order === "asc" || parsed.order === "desc") &&
      typeof parsed.store === "string"
    ) {
      return { filter: parsed.filter, order: parsed.order, store: parsed.store };
    }
  } catch {
    // refused below
  }
  throw new InvalidParameterError(
    "page_token is not one this listing issued: pass next_page_token or prev_page_token unchanged",
  );
}
