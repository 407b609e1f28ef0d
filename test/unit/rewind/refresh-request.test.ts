import { describe, expect, it } from "vitest";
import { parseRefreshRequest } from "../../../shared/rewind/refresh-request.ts";
import { InvalidParameterError } from "../../../shared/errors/coded-error.ts";

describe("parseRefreshRequest", () => {
  it("is an incremental run of everything by default", () => {
    expect(parseRefreshRequest({})).toEqual({ onlySelected: false });
    expect(parseRefreshRequest(undefined)).toEqual({ onlySelected: false });
    expect(parseRefreshRequest({ refresh: "incremental" })).toEqual({ onlySelected: false });
  });

  it("reads refresh case-insensitively: full, Full and FULL are one mode", () => {
    for (const refresh of ["full", "Full", "FULL"]) {
      expect(parseRefreshRequest({ refresh })).toEqual({ reset: { mode: "FULL" }, onlySelected: false });
    }
    expect(parseRefreshRequest({ refresh: "reset", selection: ["raw"] })).toEqual({
      reset: { mode: "RESET", names: ["raw"], field: "selection" },
      onlySelected: true,
    });
  });

  it("treats full_refresh: true as refresh FULL of everything", () => {
    expect(parseRefreshRequest({ full_refresh: true })).toEqual({
      reset: { mode: "FULL" },
      onlySelected: false,
    });
    expect(parseRefreshRequest({ full_refresh: true, refresh: "FULL" })).toEqual({
      reset: { mode: "FULL" },
      onlySelected: false,
    });
  });

  it("maps Databricks' full_refresh_selection and refresh_selection", () => {
    expect(parseRefreshRequest({ full_refresh_selection: ["clean"], refresh_selection: ["totals"] })).toEqual(
      {
        reset: { mode: "FULL", names: ["clean"], field: "full_refresh_selection" },
        incremental: ["totals"],
        incrementalField: "refresh_selection",
        onlySelected: true,
      },
    );
    expect(parseRefreshRequest({ refresh_selection: ["totals"] })).toEqual({
      incremental: ["totals"],
      incrementalField: "refresh_selection",
      onlySelected: true,
    });
  });

  it("normalizes reset_mode case-insensitively as an override of FULL or RESET", () => {
    expect(parseRefreshRequest({ refresh: "RESET", reset_mode: "drop" })).toEqual({
      reset: { mode: "RESET" },
      onlySelected: false,
      resetModeOverride: "DROP",
    });
    expect(parseRefreshRequest({ full_refresh_selection: ["raw"], reset_mode: "Truncate" })).toMatchObject({
      resetModeOverride: "TRUNCATE",
    });
  });

  it("keeps reset_checkpoint_selection alongside an incremental run", () => {
    expect(parseRefreshRequest({ reset_checkpoint_selection: ["cleanse"] })).toEqual({
      onlySelected: false,
      checkpointReset: ["cleanse"],
    });
  });

  it.each([
    [{ reset_mode: "DROP" }, /reset_mode DROP needs refresh FULL or RESET/],
    [{ refresh: "INCREMENTAL", reset_mode: "TRUNCATE" }, /needs refresh FULL or RESET/],
    [{ refresh: "FULL", refresh_selection: ["raw"] }, /use selection with refresh/],
    [{ selection: ["raw"], full_refresh_selection: ["raw"] }, /either selection/],
    [{ full_refresh: true, full_refresh_selection: ["raw"] }, /already refreshes every dataset/],
    [{ full_refresh: true, refresh: "RESET" }, /contradicts refresh: RESET/],
    [{ refresh: "RESET", reset_checkpoint_selection: ["ingest"] }, /leave out reset_checkpoint_selection/],
    [{ refresh: "PARTIAL" }, /refresh: must be one of "INCREMENTAL", "FULL", "RESET"/],
    [{ reset_mode: "WIPE", refresh: "FULL" }, /reset_mode: must be one of "DROP", "TRUNCATE"/],
    [{ refresh: "FULL", selection: [] }, /selection: needs at least one name/],
    [{ refresh: "FULL", fullrefresh: true }, /unknown field "fullrefresh"/],
  ])("refuses %j with INVALID_PARAMETER_VALUE", (input, message) => {
    let caught: unknown;
    try {
      parseRefreshRequest(input);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidParameterError);
    expect((caught as InvalidParameterError).errorCode).toBe("INVALID_PARAMETER_VALUE");
    expect((caught as Error).message).toMatch(message);
  });
});
