import { describe, expect, it } from "vitest";
import {
  PipelineBusyError,
  RefreshIncompleteError,
  RewindIncompleteError,
} from "../../../shared/rewind/errors.ts";
import { assertBegun, checkUpdateAllowed } from "../../../shared/rewind/update-guard.ts";

const idle = { rewindBlocked: false };
const blocked = { rewindBlocked: true, rewindBlockedBy: "U1" };
const strict = { allowUpdateAfterIncompleteRewind: false };

describe("checkUpdateAllowed", () => {
  it("allows any update on an idle pipeline", () => {
    expect(() => checkUpdateAllowed(idle, strict, "other")).not.toThrow();
    expect(() => checkUpdateAllowed(idle, strict, "rewind")).not.toThrow();
  });

  it("refuses a second update with PIPELINE_BUSY (409)", () => {
    const run = () => checkUpdateAllowed({ ...idle, activeUpdateId: "U9" }, strict, "rewind");
    expect(run).toThrow(PipelineBusyError);
    expect(run).toThrow(/update U9 is running/);
    try {
      run();
    } catch (error) {
      expect((error as PipelineBusyError).httpStatus).toBe(409);
      expect((error as PipelineBusyError).errorCode).toBe("PIPELINE_BUSY");
    }
  });

  it("refuses non-rewind updates after an incomplete rewind with PIPELINE_REWIND_INCOMPLETE (409), but not a rewind", () => {
    const run = () => checkUpdateAllowed(blocked, strict, "other");
    expect(run).toThrow(RewindIncompleteError);
    expect(run).toThrow(/rewind update U1 failed part-way.*pipelines\.allowUpdateAfterIncompleteRewind/);
    expect(() => checkUpdateAllowed(blocked, strict, "rewind")).not.toThrow();
  });

  it("after a refresh stopped part-way, refuses updates that do not reset its datasets again with PIPELINE_REFRESH_INCOMPLETE (409)", () => {
    const stopped = { ...idle, resetUnderWay: { updateId: "U2", datasets: ["raw", "orders"], since: 1 } };
    const run = (resets: string[]) => () => checkUpdateAllowed(stopped, strict, "other", resets);
    expect(run([])).toThrow(RefreshIncompleteError);
    expect(run(["orders"])).toThrow(
      /update U2 was stopped part-way through resetting datasets raw, orders.*full_refresh_selection: \["raw","orders"\].*rewind to a point before update U2/,
    );
    expect(run(["raw", "orders", "totals"])).not.toThrow();
    expect(() => checkUpdateAllowed(stopped, strict, "rewind")).not.toThrow();
    // The incomplete-rewind override is about rewinds: it does not let rows be lost.
    expect(() => checkUpdateAllowed(stopped, { allowUpdateAfterIncompleteRewind: true }, "other")).toThrow(
      RefreshIncompleteError,
    );
  });

  it("lets pipelines.allowUpdateAfterIncompleteRewind override the block", () => {
    expect(() =>
      checkUpdateAllowed(blocked, { allowUpdateAfterIncompleteRewind: true }, "other"),
    ).not.toThrow();
  });

  it("turns the repository's busy result into PIPELINE_BUSY", () => {
    expect(() => assertBegun({ outcome: "pipeline-busy", activeUpdateId: "U2" })).toThrow(PipelineBusyError);
  });
});
