import type { Action } from "./actions.ts";

/**
 * The bytes of a commit file (PROTOCOL.md "Delta Log Entries"): newline-delimited JSON, one action
 * per line, each a single-key object `{"<kind>": {...}}`, in the order given. `commit-file.ts` is
 * the reading side.
 */
export function encodeCommit(actions: readonly Action[]): Uint8Array {
  return new TextEncoder().encode(actions.map((action) => JSON.stringify(action)).join("\n") + "\n");
}
