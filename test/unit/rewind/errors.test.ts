import { describe, expect, it } from "vitest";
import { toErrorResponse } from "../../../shared/api/error-response.ts";
import * as errors from "../../../shared/rewind/errors.ts";

/** Every error the API can answer with for a rewind, refresh or reset, as semantics.md names them. */
const EXPECTED: Record<string, [string, 400 | 409]> = {
  MultipleRewindTargetsError: ["INVALID_REWIND_SPECIFICATION.MULTIPLE_REWIND_TARGETS", 400],
  MissingRewindTargetError: ["INVALID_REWIND_SPECIFICATION.MISSING_REWIND_TARGET", 400],
  RewindPointNotFoundError: ["INVALID_REWIND_SPECIFICATION.REWIND_POINT_NOT_FOUND", 400],
  InvalidRewindTimestampError: ["INVALID_REWIND_SPECIFICATION.INVALID_TIMESTAMP", 400],
  BeyondRetentionError: ["INVALID_REWIND_SPECIFICATION.BEYOND_RETENTION", 400],
  CheckpointBeyondRetentionError: ["INVALID_REWIND_SPECIFICATION.CHECKPOINT_BEYOND_RETENTION", 400],
  RewindDatasetNotFoundError: ["INVALID_REWIND_SPECIFICATION.DATASET_NOT_FOUND", 400],
  DatasetNotInRewindPointError: ["INVALID_REWIND_SPECIFICATION.DATASET_NOT_IN_REWIND_POINT", 400],
  InvalidCascadeConfigurationError: ["INVALID_REWIND_SPECIFICATION.INVALID_CASCADE_CONFIGURATION", 400],
  InconsistentUpstreamCheckpointResetError: [
    "INVALID_REWIND_SPECIFICATION.INCONSISTENT_UPSTREAM_CHECKPOINT_RESET",
    400,
  ],
  ResetCheckpointsRequiredError: ["INVALID_REWIND_SPECIFICATION.RESET_CHECKPOINTS_REQUIRED", 400],
  RewindBeforeFullRefreshError: ["REWIND_BEFORE_FULL_REFRESH", 400],
  PipelineBusyError: ["PIPELINE_BUSY", 409],
  RewindIncompleteError: ["PIPELINE_REWIND_INCOMPLETE", 409],
  RefreshIncompleteError: ["PIPELINE_REFRESH_INCOMPLETE", 409],
  RefreshSelectionOverlapError: ["REFRESH_SELECTION_OVERLAP", 400],
  IncompatibleRestoredStateError: ["INVALID_PARAMETER_VALUE", 400],
  ConcurrentRewindChangeError: ["RESOURCE_CONFLICT", 409],
  RewindNotEnabledError: ["INVALID_PARAMETER_VALUE", 400],
};

const SAMPLES: Record<string, () => errors.RewindError> = {
  MultipleRewindTargetsError: () => new errors.MultipleRewindTargetsError(),
  MissingRewindTargetError: () => new errors.MissingRewindTargetError(),
  RewindPointNotFoundError: () => new errors.RewindPointNotFoundError("01X"),
  InvalidRewindTimestampError: () => new errors.InvalidRewindTimestampError("x", "format"),
  BeyondRetentionError: () => new errors.BeyondRetentionError([{ owner: "t", what: "version 1 is gone" }]),
  CheckpointBeyondRetentionError: () =>
    new errors.CheckpointBeyondRetentionError([{ owner: "f", what: "checkpoint 3 is gone" }]),
  RewindDatasetNotFoundError: () => new errors.RewindDatasetNotFoundError(["a.b.c"], ["a.b.d"]),
  DatasetNotInRewindPointError: () => new errors.DatasetNotInRewindPointError(["a.b.c"]),
  InvalidCascadeConfigurationError: () =>
    new errors.InvalidCascadeConfigurationError([{ reader: "a.b.r", upstream: "a.b.u" }]),
  InconsistentUpstreamCheckpointResetError: () =>
    new errors.InconsistentUpstreamCheckpointResetError([{ dataset: "a.b.d", upstream: "a.b.u" }]),
  ResetCheckpointsRequiredError: () =>
    new errors.ResetCheckpointsRequiredError([
      { dataset: "a.b.d", flow: "f", source: "auto_loader s3://x/" },
    ]),
  RewindBeforeFullRefreshError: () =>
    new errors.RewindBeforeFullRefreshError([{ dataset: "a.b.d", refreshedAt: 2 }], 1),
  PipelineBusyError: () => new errors.PipelineBusyError("U1"),
  RewindIncompleteError: () => new errors.RewindIncompleteError("U1"),
  RefreshIncompleteError: () => new errors.RefreshIncompleteError("U1", ["a.b.orders"]),
  RefreshSelectionOverlapError: () => new errors.RefreshSelectionOverlapError(["orders"]),
  IncompatibleRestoredStateError: () => new errors.IncompatibleRestoredStateError("f", "its state changed"),
  ConcurrentRewindChangeError: () => new errors.ConcurrentRewindChangeError("f", 3, "head-moved"),
  RewindNotEnabledError: () => new errors.RewindNotEnabledError(),
};

describe("rewind errors", () => {
  it("cover every error class of the module", () => {
    const classes = Object.entries(errors)
      .filter(([, value]) => typeof value === "function" && value.prototype instanceof errors.RewindError)
      .map(([name]) => name)
      .sort();
    expect(classes).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.keys(EXPECTED))(
    "%s answers its error_code and status with a message that says what to do",
    (name) => {
      const error = SAMPLES[name]!();
      const [code, status] = EXPECTED[name]!;
      expect(error.name).toBe(name);
      expect(error.errorCode).toBe(code);
      expect(error.httpStatus).toBe(status);
      expect(toErrorResponse(error)).toEqual({ status, body: { error_code: code, message: error.message } });
      expect(error.message.length).toBeGreaterThan(40);
      expect(error.message).toMatch(/[:;] /); // what went wrong, then what to do
    },
  );
});
