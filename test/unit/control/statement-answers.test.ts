import { describe, expect, it } from "vitest";
import {
  getStatement,
  keepStatementAnswer,
  STATEMENT_RETENTION_MS,
} from "../../../shared/control/statements/statement-answers.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";

describe("a statement's kept answer", () => {
  it("is answered until its retention passes, then is gone with the way out", async () => {
    let now = Date.UTC(2026, 11, 2);
    const plane = { bucket: new MemoryObjectStore(), clock: () => now };
    const answer = {
      statement_id: "5f0c9d3e-8a1b-4c2d-9e3f-0a1b2c3d4e5f",
      status: { state: "SUCCEEDED" as const },
    };
    await keepStatementAnswer(plane, answer);
    now += STATEMENT_RETENTION_MS - 1;
    expect(await getStatement(plane, answer.statement_id)).toEqual(answer);
    now += 1;
    await expect(getStatement(plane, answer.statement_id)).rejects.toMatchObject({
      errorCode: "RESOURCE_DOES_NOT_EXIST",
      message: expect.stringContaining("run the statement again"),
    });
  });
});
