import { describe, expect, it } from "vitest";
import { eventAnswer, stackFrames } from "../../../shared/api/event-answer.ts";
import { pipelineEvent } from "../../../shared/api/response-schemas.ts";
import { eventError } from "../../../shared/engine/event-recorder.ts";
import type { PipelineEvent } from "../../../shared/store/event-log-repository.ts";

class FlowFailed extends Error {
  override readonly name = "FlowFailed";
}

function failedEvent(): PipelineEvent {
  const cause = new Error("Binder Error: no such column");
  return {
    id: "01M98AH0DY045Y00RNTDDF4202",
    sequence: { control_plane_seq_no: 1 },
    origin: { pipeline_id: "p", pipeline_name: "orders", update_id: "u" },
    timestamp: "2026-12-07T13:19:42.000Z",
    message: "Update u is FAILED",
    level: "ERROR",
    maturity_level: "STABLE",
    error: eventError(new FlowFailed('the SQL of flow "clean" failed', { cause }), true),
    event_type: "update_progress",
    details: {},
  };
}

describe("an event as the API answers it", () => {
  it("carries each exception's stack as Databricks' StackFrames, which the SDKs parse", () => {
    const answered = pipelineEvent.parse(eventAnswer(failedEvent()));
    const [failed, cause] = answered.error!.exceptions;
    expect(failed).toMatchObject({ class_name: "FlowFailed", message: 'the SQL of flow "clean" failed' });
    expect(cause).toMatchObject({ class_name: "Error", message: "Binder Error: no such column" });
    expect(failed!.stack!.length).toBeGreaterThan(0);
    expect(failed!.stack![0]).toEqual({
      declaring_class: expect.any(String),
      method_name: expect.any(String),
      file_name: expect.stringMatching(/event-answer\.test\.ts$/),
      line_number: expect.any(Number),
    });
  });

  it("reads V8's frames with and without a callee", () => {
    const stack = [
      "QueryFailedError: the SQL of flow failed",
      "    at Sandbox.explainingFailures (file:///ebb/shared/engine/sandbox.ts:312:13)",
      "    at async runBatch (/ebb/shared/engine/micro-batch.ts:443:15)",
      "    at file:///ebb/functions/run-flow.ts:20:3",
    ].join("\n");
    expect(stackFrames(stack)).toEqual([
      {
        declaring_class: "Sandbox",
        method_name: "explainingFailures",
        file_name: "file:///ebb/shared/engine/sandbox.ts",
        line_number: 312,
      },
      {
        declaring_class: "",
        method_name: "runBatch",
        file_name: "/ebb/shared/engine/micro-batch.ts",
        line_number: 443,
      },
      {
        declaring_class: "",
        method_name: "",
        file_name: "file:///ebb/functions/run-flow.ts",
        line_number: 20,
      },
    ]);
  });

  it("leaves an event without an error as it is", () => {
    const { error: _, ...plain } = failedEvent();
    expect(eventAnswer(plain)).toEqual(plain);
  });
});
