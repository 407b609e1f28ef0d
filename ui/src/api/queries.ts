import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { TERMINAL_STATES, type UpdateState } from "../../../shared/client/ebb-client.ts";
import { ebb } from "./client.ts";

/**
 * Every read the UI makes, as TanStack Query hooks keyed by resource. What can change while someone
 * watches (states, a running update's progress) polls; polling slows down once nothing runs.
 */

export const keys = {
  pipelines: ["pipelines"] as const,
  pipeline: (id: string) => ["pipeline", id] as const,
  datasets: (id: string) => ["pipeline", id, "datasets"] as const,
  updates: (id: string) => ["pipeline", id, "updates"] as const,
  update: (id: string, updateId: string) => ["pipeline", id, "update", updateId] as const,
  points: (id: string) => ["pipeline", id, "rewind-points"] as const,
  events: (id: string, query: object) => ["pipeline", id, "events", query] as const,
  history: (table: string) => ["table", table, "history"] as const,
  branches: (id: string) => ["pipeline", id, "branches"] as const,
  branch: (id: string, name: string) => ["pipeline", id, "branch", name] as const,
  branchDiff: (id: string, name: string, maxSamples: number) =>
    ["pipeline", id, "branch", name, "diff", maxSamples] as const,
};

const ACTIVE_MS = 1000;
const IDLE_MS = 5000;

export function isTerminal(state: string): boolean {
  return TERMINAL_STATES.includes(state as UpdateState);
}

export function usePipelines(enabled = true) {
  return useQuery({
    queryKey: keys.pipelines,
    enabled,
    queryFn: async () => (await ebb.listPipelines()).statuses,
    refetchInterval: IDLE_MS,
  });
}

export function usePipeline(id: string, enabled = true) {
  return useQuery({
    queryKey: keys.pipeline(id),
    enabled,
    queryFn: async () => await ebb.getPipeline(id),
    refetchInterval: (query) => (query.state.data?.state === "IDLE" ? IDLE_MS : ACTIVE_MS),
  });
}

export function useDatasets(id: string, running: boolean) {
  return useQuery({
    queryKey: keys.datasets(id),
    queryFn: async () => (await ebb.datasets(id)).datasets,
    refetchInterval: running ? ACTIVE_MS * 2 : IDLE_MS * 2,
  });
}

export function useUpdates(id: string, running: boolean) {
  return useQuery({
    queryKey: keys.updates(id),
    queryFn: async () => (await ebb.listUpdates(id, { max_results: 100 })).updates,
    refetchInterval: running ? ACTIVE_MS : IDLE_MS,
  });
}

export function useUpdate(id: string, updateId: string | undefined) {
  return useQuery({
    queryKey: keys.update(id, updateId ?? ""),
    queryFn: async () => (await ebb.getUpdate(id, updateId!)).update,
    enabled: updateId !== undefined,
    refetchInterval: (query) => (query.state.data && isTerminal(query.state.data.state) ? false : ACTIVE_MS),
  });
}

export function useRewindPoints(id: string, enabled = true) {
  return useQuery({
    queryKey: keys.points(id),
    enabled,
    queryFn: () => ebb.allRewindPoints(id),
  });
}

export function useTableHistory(table: string) {
  return useQuery({
    queryKey: keys.history(table),
    queryFn: async () => (await ebb.history(table)).history,
  });
}

/** Branches listed a page at a time (by name); the next page is fetched on demand. */
export const BRANCH_PAGE = 10;

export function useBranches(id: string) {
  return useInfiniteQuery({
    queryKey: keys.branches(id),
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      ebb.branches(id, {
        maxResults: BRANCH_PAGE,
        ...(pageParam !== undefined ? { pageToken: pageParam } : {}),
      }),
    getNextPageParam: (last) => last.next_page_token,
  });
}

export function useBranch(id: string, name: string) {
  return useQuery({
    queryKey: keys.branch(id, name),
    queryFn: async () => (await ebb.branch(id, name)).branch,
    retry: false,
  });
}

/** The diff reads every row of both sides: read once, again only when asked (or after a publish). */
export function useBranchDiff(id: string, name: string, maxSamples: number) {
  return useQuery({
    queryKey: keys.branchDiff(id, name, maxSamples),
    queryFn: async () => await ebb.branchDiff(id, name, { maxSamples }),
    retry: false,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
}
