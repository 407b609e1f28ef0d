import type { UpdateRecord } from "../../store/updates-repository.ts";
import { intentOf, updateKindOf, type OrderedRunStep } from "./update-intent.ts";

/**
 * What FinishUpdate needs to know of the update. The plan of a run that went straight to its levels
 * hands it on (the machine's state carries `$.plan`), so FinishUpdate reads nothing before its one
 * write; without it, FinishUpdate reads the update and derives the same.
 */
export interface FinishFacts {
  readonly definitionVersion: number;
  /** What the update does, for its "Update Completed" event (docs/events.md). */
  readonly updateKind: ReturnType<typeof updateKindOf>;
  /** A run that was not a validation: a rewind point is captured at its end (rewind on). */
  readonly ranFlows: boolean;
  /** Every flow ran: the tables are as this definition version writes them. */
  readonly wroteEveryTable: boolean;
  /** The run is one of an ordered run: the next pipeline starts once it completes. */
  readonly orderedRun?: OrderedRunStep;
}

export function finishFactsOf(update: UpdateRecord): FinishFacts {
  const intent = intentOf(update);
  const ranFlows = intent.kind === "run" && !intent.validateOnly;
  return {
    definitionVersion: update.definitionVersion,
    updateKind: updateKindOf(intent),
    ranFlows,
    // A run of every flow leaves every table as this definition writes it (start-update's schema check).
    wroteEveryTable: ranFlows && !intent.refresh.onlySelected,
    ...(intent.kind === "run" && intent.orderedRun ? { orderedRun: intent.orderedRun } : {}),
  };
}
