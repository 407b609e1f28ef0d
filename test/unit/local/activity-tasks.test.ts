import { describe, expect, it } from "vitest";
import { taskFunctionIds, withActivityTasks } from "../../../infra/local/activity-tasks.ts";

const fn = (id: string) => `arn:aws:lambda:us-east-1:000000000000:function:${id}`;
const activity = (id: string) => `arn:aws:states:us-east-1:000000000000:activity:ebb-x-${id}`;

/** The synthesized machine's shapes: top-level tasks, a Map's item processor, a Choice, a retry. */
const definition = () => ({
  StartAt: "Plan",
  States: {
    Plan: {
      Type: "Task",
      Resource: fn("Plan"),
      Retry: [{ ErrorEquals: ["StoreUnavailableError"], IntervalSeconds: 2, MaxAttempts: 4 }],
      Catch: [{ ErrorEquals: ["States.ALL"], ResultPath: "$.error", Next: "Fail" }],
      ResultPath: "$.plan",
      Next: "Branch",
    },
    Branch: { Type: "Choice", Choices: [], Default: "Levels" },
    Levels: {
      Type: "Map",
      ItemsPath: "$.plan.levels",
      ItemProcessor: {
        ProcessorConfig: { Mode: "INLINE" },
        StartAt: "Run",
        States: {
          Run: { Type: "Task", Resource: fn("RunFlow"), ResultPath: null, End: true },
          FailInRun: { Type: "Task", Resource: fn("Fail"), End: true },
        },
      },
      Next: "Fail",
    },
    Fail: { Type: "Task", Resource: fn("Fail"), Parameters: { "pipelineId.$": "$.pipelineId" }, End: true },
  },
});

describe("the state machine on activities", () => {
  it("finds each function the tasks invoke once, item processors' included", () => {
    expect(taskFunctionIds(definition())).toEqual(["Plan", "RunFlow", "Fail"]);
  });

  it("points every task at its function's activity and changes nothing else", () => {
    const arns = new Map(["Plan", "RunFlow", "Fail"].map((id) => [id, activity(id)]));
    const original = definition();
    const rewritten = withActivityTasks(original, arns);
    const expected = definition();
    expected.States.Plan.Resource = activity("Plan");
    expected.States.Levels.ItemProcessor.States.Run.Resource = activity("RunFlow");
    expected.States.Levels.ItemProcessor.States.FailInRun.Resource = activity("Fail");
    expected.States.Fail.Resource = activity("Fail");
    expect(rewritten).toEqual(expected);
    // The definition it was given is left as it was.
    expect(original).toEqual(definition());
  });

  it("refuses a task that is not a function of the stack, or one without an activity", () => {
    const foreign = definition();
    foreign.States.Plan.Resource = "arn:aws:states:::lambda:invoke";
    expect(() => taskFunctionIds(foreign)).toThrow(/task Plan runs arn:aws:states:::lambda:invoke/);
    expect(() => withActivityTasks(definition(), new Map([["Plan", activity("Plan")]]))).toThrow(
      /task Run: no activity for function RunFlow/,
    );
  });
});
