import { describe, expect, it } from "vitest";
import {
  InvalidRewindTimestampError,
  MissingRewindTargetError,
  MultipleRewindTargetsError,
} from "../../../shared/rewind/errors.ts";
import { parseRewindSpec } from "../../../shared/rewind/rewind-spec.ts";
import { InvalidParameterError } from "../../../shared/errors/coded-error.ts";

const NOW = Date.parse("2026-09-30T12:00:00Z");

describe("parseRewindSpec", () => {
  it("takes a point id, leaving datasets out and dry_run false", () => {
    expect(parseRewindSpec({ rewind_point_id: "01ABC" }, NOW)).toEqual({
      target: { kind: "point", rewindPointId: "01ABC" },
      dryRun: false,
      notInPointMode: "TRUNCATE",
    });
  });

  it("takes not_in_point_mode TRUNCATE (the default) or DROP, in any case, and refuses another", () => {
    const mode = (value: unknown) =>
      parseRewindSpec({ rewind_point_id: "01ABC", not_in_point_mode: value }, NOW).notInPointMode;
    expect(mode("drop")).toBe("DROP");
    expect(mode("TRUNCATE")).toBe("TRUNCATE");
    expect(() => mode("DELETE")).toThrow(/rewind_spec\.not_in_point_mode/);
  });

  it("takes a UTC timestamp in the Databricks form and in ISO-8601 with T and Z", () => {
    const spaced = parseRewindSpec({ rewind_timestamp: "2026-09-29 08:36:55" }, NOW);
    const iso = parseRewindSpec({ rewind_timestamp: "2026-09-29T08:36:55Z" }, NOW);
    expect(spaced.target).toEqual({
      kind: "timestamp",
      text: "2026-09-29 08:36:55",
      time: Date.parse("2026-09-29T08:36:55Z"),
    });
    expect(iso.target).toMatchObject({ time: Date.parse("2026-09-29T08:36:55Z") });
  });

  it("defaults reset_checkpoints to true per dataset and keeps cascade and dry_run", () => {
    const spec = parseRewindSpec(
      { rewind_point_id: "p", datasets: [{ identifier: "main.sales.raw", cascade: false }], dry_run: true },
      NOW,
    );
    expect(spec.datasets).toEqual([
      { identifier: "main.sales.raw", cascade: false, reset_checkpoints: true },
    ]);
    expect(spec.dryRun).toBe(true);
  });

  it("refuses both targets with MULTIPLE_REWIND_TARGETS", () => {
    const error = catchError(() =>
      parseRewindSpec({ rewind_point_id: "p", rewind_timestamp: "2026-09-29 08:36:55" }, NOW),
    );
    expect(error).toBeInstanceOf(MultipleRewindTargetsError);
    expect(error.errorCode).toBe("INVALID_REWIND_SPECIFICATION.MULTIPLE_REWIND_TARGETS");
    expect(error.httpStatus).toBe(400);
    expect(error.message).toMatch(/set exactly one/);
  });

  it("refuses no target with MISSING_REWIND_TARGET", () => {
    const error = catchError(() => parseRewindSpec({ dry_run: true }, NOW));
    expect(error).toBeInstanceOf(MissingRewindTargetError);
    expect(error.errorCode).toBe("INVALID_REWIND_SPECIFICATION.MISSING_REWIND_TARGET");
  });

  it.each([
    "2026-09-29",
    "29/09/2026 08:36:55",
    "2026-09-29T08:36:55",
    "2026-09-29T08:36:55+02:00",
    "2026-02-30 08:00:00",
    "yesterday",
  ])("refuses %j with INVALID_TIMESTAMP naming the accepted forms", (text) => {
    const error = catchError(() => parseRewindSpec({ rewind_timestamp: text }, NOW));
    expect(error).toBeInstanceOf(InvalidRewindTimestampError);
    expect(error.errorCode).toBe("INVALID_REWIND_SPECIFICATION.INVALID_TIMESTAMP");
    expect(error.message).toContain("yyyy-MM-dd HH:mm:ss");
  });

  it("refuses a timestamp in the future with INVALID_TIMESTAMP, and accepts now itself", () => {
    const error = catchError(() => parseRewindSpec({ rewind_timestamp: "2026-09-30 12:00:01" }, NOW));
    expect(error).toBeInstanceOf(InvalidRewindTimestampError);
    expect(error.message).toMatch(/future/);
    expect(parseRewindSpec({ rewind_timestamp: "2026-09-30 12:00:00" }, NOW).target).toMatchObject({
      time: NOW,
    });
  });

  it("refuses unknown fields and wrong types with INVALID_PARAMETER_VALUE naming them", () => {
    const unknown = catchError(() => parseRewindSpec({ rewind_point_id: "p", dryrun: true }, NOW));
    expect(unknown).toBeInstanceOf(InvalidParameterError);
    expect(unknown.errorCode).toBe("INVALID_PARAMETER_VALUE");
    expect(unknown.message).toContain('"dryrun"');
    const missingCascade = catchError(() =>
      parseRewindSpec({ rewind_point_id: "p", datasets: [{ identifier: "x" }] }, NOW),
    );
    expect(missingCascade.message).toContain("rewind_spec.datasets[0].cascade");
    const typo = catchError(() =>
      parseRewindSpec(
        { rewind_point_id: "p", datasets: [{ identifier: "x", cascade: true, reset_checkpoint: false }] },
        NOW,
      ),
    );
    expect(typo.message).toContain('"reset_checkpoint"');
  });
});

function catchError(run: () => unknown): InvalidParameterError & { errorCode: string; httpStatus: number } {
  try {
    run();
  } catch (error) {
    return error as InvalidParameterError;
  }
  throw new Error("expected an error");
}
