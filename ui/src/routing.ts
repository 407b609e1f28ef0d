import { useSyncExternalStore } from "react";

/**
 * The app's few routes over the History API (the local runtime answers every non-file path with the
 * app, so a reload or a pasted link opens the same page).
 *   /                          pipelines
 *   /pipelines/:id             a pipeline (graph, updates, live update, events)
 *   /pipelines/:id?update=:u   … with that update selected
 *   /pipelines/:id/rewind      the rewind wizard (?point=:p: at that point)
 *   /pipelines/:id/branches/:b a branch: its tables, its diff against live, publish, discard
 *   /tables/:name              a table (history, browse, change feed)
 *   /rewinds?from=:id          several pipelines rewound to one cut, then replayed in order
 */

export type Route =
  | { readonly page: "pipelines" }
  | { readonly page: "pipeline"; readonly id: string; readonly tab: string; readonly update?: string }
  | { readonly page: "rewind"; readonly id: string; readonly point?: string }
  | { readonly page: "branch"; readonly id: string; readonly name: string }
  | { readonly page: "cut"; readonly from?: string }
  | { readonly page: "table"; readonly table: string; readonly pipelineId?: string };

export function parseRoute(pathname: string, search: string): Route {
  const params = new URLSearchParams(search);
  const parts = pathname.split("/").filter(Boolean).map(decodeURIComponent);
  const point = params.get("point");
  const update = params.get("update");
  if (parts[0] === "pipelines" && parts[1] && parts[2] === "rewind")
    return { page: "rewind", id: parts[1], ...(point ? { point } : {}) };
  if (parts[0] === "pipelines" && parts[1] && parts[2] === "branches" && parts[3])
    return { page: "branch", id: parts[1], name: parts[3] };
  if (parts[0] === "pipelines" && parts[1])
    return {
      page: "pipeline",
      id: parts[1],
      tab: params.get("tab") ?? "graph",
      ...(update ? { update } : {}),
    };
  if (parts[0] === "rewinds") {
    const from = params.get("from");
    return { page: "cut", ...(from ? { from } : {}) };
  }
  if (parts[0] === "tables" && parts[1]) {
    const pipelineId = params.get("pipeline");
    return { page: "table", table: parts[1], ...(pipelineId ? { pipelineId } : {}) };
  }
  return { page: "pipelines" };
}

const listeners = new Set<() => void>();
window.addEventListener("popstate", () => listeners.forEach((l) => l()));

export function navigate(to: string): void {
  window.history.pushState(null, "", to);
  listeners.forEach((l) => l());
  window.scrollTo(0, 0);
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const snapshot = () => window.location.pathname + window.location.search;

export function useRoute(): Route {
  const location = useSyncExternalStore(subscribe, snapshot);
  const url = new URL(location, window.location.origin);
  return parseRoute(url.pathname, url.search);
}

export const paths = {
  pipelines: () => "/",
  pipeline: (id: string, tab?: string, update?: string) =>
    `/pipelines/${encodeURIComponent(id)}${query({ tab, update })}`,
  rewind: (id: string, point?: string) => `/pipelines/${encodeURIComponent(id)}/rewind${query({ point })}`,
  branch: (id: string, name: string) =>
    `/pipelines/${encodeURIComponent(id)}/branches/${encodeURIComponent(name)}`,
  cut: (from?: string) => `/rewinds${from ? `?from=${encodeURIComponent(from)}` : ""}`,
  table: (table: string, pipelineId?: string) =>
    `/tables/${encodeURIComponent(table)}${pipelineId ? `?pipeline=${encodeURIComponent(pipelineId)}` : ""}`,
};

function query(params: Readonly<Record<string, string | undefined>>): string {
  const set = Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined);
  return set.length > 0 ? `?${new URLSearchParams(set).toString()}` : "";
}
