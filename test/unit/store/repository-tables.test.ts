import { describe, expect, it } from "vitest";
import { tablesFromEnv } from "../../../shared/store/repository-tables.ts";
import { StoreConfigurationError } from "../../../shared/store/errors.ts";

describe("tablesFromEnv", () => {
  it("reads the four table names", () => {
    expect(
      tablesFromEnv({
        EBB_PIPELINES_TABLE: "p",
        EBB_UPDATES_TABLE: "u",
        EBB_CHECKPOINTS_TABLE: "c",
        EBB_EVENT_LOG_TABLE: "e",
      }),
    ).toEqual({ pipelines: "p", updates: "u", checkpoints: "c", eventLog: "e" });
  });

  it("names every missing variable at once", () => {
    expect(() => tablesFromEnv({ EBB_UPDATES_TABLE: "u", EBB_CHECKPOINTS_TABLE: "" })).toThrow(
      new StoreConfigurationError(
        "missing environment variables EBB_PIPELINES_TABLE, EBB_CHECKPOINTS_TABLE, EBB_EVENT_LOG_TABLE: set the DynamoDB table names",
      ),
    );
  });
});
