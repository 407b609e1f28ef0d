import { describe, expect, it } from "vitest";
import { PipelineBusyError, RewindIncompleteError } from "../../../shared/rewind/errors.ts";
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

  it("lets pipelines.allowUpdateAfterIncompleteRewind override the block", () => {
    expect(() =>
      checkUpdateAllowed(blocked, { allowUpdateAfterIncompleteRewind: true }, "other"),
    ).not.toThrow();
  });

  it("turns the repository's busy result into PIPELINE_BUSY", () => {
    expect(() => assertBegun({ outcome: "pipeline-busy", activeUpdateId: "U2" })).toThrow(PipelineBusyError);
  });
});
