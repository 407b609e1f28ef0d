import { describe, expect, it } from "vitest";
import { codedMessage, describeCaught } from "../../../shared/control/updates/steps/task-errors.ts";
import { refreshFieldsOf } from "../../../shared/control/updates/update-intent.ts";
import { flowProgress, updateInfo } from "../../../shared/control/updates/update-views.ts";
import { PipelineBusyError } from "../../../shared/rewind/errors.ts";
import type { PipelineEvent } from "../../../shared/store/event-log-repository.ts";

describe("errors carried through a task failure", () => {
  it("puts a domain error's code in front of its message, once", () => {
    const error = new PipelineBusyError("U1");
    const message = codedMessage(error);
    expect(message).toMatch(/^\[PIPELINE_BUSY\] update U1 is running/);
    expect(codedMessage(Object.assign(new Error(message), { errorCode: "PIPELINE_BUSY" }))).toBe(message);
    expect(codedMessage(new Error("plain"))).toBe("plain");
  });

  it("reads the code back from a Lambda cause (JSON) or a local one (the message)", () => {
    const lambda = {
      Error: "PipelineBusyError",
      Cause: JSON.stringify({
        errorType: "PipelineBusyError",
        errorMessage: "[PIPELINE_BUSY] busy",
        trace: [],
      }),
    };
    expect(describeCaught(lambda)).toEqual({ errorCode: "PIPELINE_BUSY", message: "busy" });
    expect(
      describeCaught({ Error: "QueryError", Cause: "[INVALID_PARAMETER_VALUE] bad SQL\nline 2" }),
    ).toEqual({
      errorCode: "INVALID_PARAMETER_VALUE",
      message: "bad SQL\nline 2",
    });
    expect(describeCaught({ Error: "SomethingElse" })).toEqual({
      errorCode: "INTERNAL_ERROR",
      message: "SomethingElse",
    });
  });

  it("names a task function that ran out of time or memory, never INTERNAL_ERROR", () => {
    const timedOut = [
      { Error: "States.Timeout" },
      {
        Error: "Sandbox.Timedout",
        Cause: JSON.stringify({ errorMessage: "RequestId: x Error: Task timed out after 900.00 seconds" }),
      },
      { Error: "Lambda.Unknown", Cause: "Task timed out after 900.10 seconds" },
    ];
    for (const caught of timedOut) expect(describeCaught(caught).errorCode).toBe("FUNCTION_TIMEOUT");
    const outOfMemory = [
      { Error: "Runtime.OutOfMemory" },
      {
        Error: "Lambda.Unknown",
        Cause: JSON.stringify({
          errorType: "Runtime.OutOfMemory",
          errorMessage: "RequestId: x Error: Runtime exited with error: signal: killed",
        }),
      },
    ];
    for (const caught of outOfMemory) expect(describeCaught(caught).errorCode).toBe("FUNCTION_OUT_OF_MEMORY");
    expect(describeCaught({ Error: "States.Timeout" }).message).toMatch(/longer taskTimeout \(EbbProps/);
  });
});

describe("update views", () => {
  const event = (
    flow: string,
    batch: number | undefined,
    rows: number,
    status = "RUNNING",
  ): PipelineEvent => ({
    id: `E${flow}${batch ?? "s"}`,
    sequence: { control_plane_seq_no: 1 },
    origin: {
      pipeline_id: "p",
      pipeline_name: "n",
      update_id: "U",
      flow_name: flow,
      dataset_name: `${flow}_table`,
      ...(batch !== undefined ? { batch_id: batch } : {}),
    },
    timestamp: "2026-11-30T00:00:00.000Z",
    message: "",
    level: "METRICS",
    maturity_level: "STABLE",
    event_type: "flow_progress",
    details: { flow_progress: { status, metrics: { num_input_rows: rows, num_output_rows: rows - 1 } } },
  });

  it("sums each flow's batches and keeps its last status", () => {
    const progress = flowProgress([
      event("a", 1, 10),
      event("a", 2, 5),
      event("a", undefined, 0, "COMPLETED"),
      event("b", 1, 3),
    ]);
    expect(progress).toEqual({
      a: { dataset: "a_table", batches: 2, rows_in: 15, rows_out: 13, status: "COMPLETED" },
      b: { dataset: "b_table", batches: 1, rows_in: 3, rows_out: 2, status: "RUNNING" },
    });
  });

  it("counts a materialized view's refresh, which has no batch, and says which way it went", () => {
    const refresh: PipelineEvent = {
      ...event("totals", undefined, 0, "COMPLETED"),
      level: "INFO",
      details: {
        flow_progress: { status: "COMPLETED", refresh: "INCREMENTAL", metrics: { num_output_rows: 3 } },
      },
    };
    expect(flowProgress([event("a", 1, 10), refresh]).totals).toEqual({
      dataset: "totals_table",
      batches: 0,
      rows_in: 0,
      rows_out: 3,
      status: "COMPLETED",
      refresh: "INCREMENTAL",
    });
  });

  it("answers Databricks' UpdateInfo fields from the recorded request", () => {
    const info = updateInfo({
      pipelineId: "p",
      updateId: "U",
      state: "FAILED",
      cause: "API_CALL",
      definitionVersion: 3,
      request: { full_refresh: true, mode: "CONTINUOUS", refresh_selection: ["a"] },
      intent: { kind: "run", refresh: { onlySelected: true }, validateOnly: false, continuous: true },
      createdAt: 1,
      lastModified: 2,
      endedAt: 2,
      error: { message: "boom" },
    });
    expect(info).toMatchObject({
      update_id: "U",
      state: "FAILED",
      mode: "CONTINUOUS",
      full_refresh: true,
      validate_only: false,
      refresh_selection: ["a"],
      definition_version: 3,
      error: { error_code: "INTERNAL_ERROR", message: "boom" },
    });
  });

  it("keeps only the refresh fields that were set", () => {
    expect(refreshFieldsOf({ cause: "X", full_refresh: false, refresh: "FULL", rewind_spec: {} })).toEqual({
      refresh: "FULL",
    });
  });
});
