import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * The Statement Execution API's follow-up calls a polling script makes after `POST …/statements`:
 * the answer again, its result chunk, and cancel, each through the local runtime's HTTP API.
 */
describe("a SQL statement's follow-up calls", () => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane();
  });
  afterAll(async () => {
    await cp?.close();
  });

  const refusal = async (method: string, path: string) => {
    const error = await cp.client.request(method, path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EbbApiError);
    return error as EbbApiError;
  };

  it("answers a statement again, its one result chunk, and cancel, for the statement that ran", async () => {
    const answer = await cp.client.executeStatement({ statement: "SELECT 1 AS one, 'a' AS letter" });
    expect(answer.status.state).toBe("SUCCEEDED");
    const id = answer.statement_id;
    expect(await cp.client.request("GET", `/api/2.0/sql/statements/${id}`)).toEqual(answer);
    expect(await cp.client.request("GET", `/api/2.0/sql/statements/${id}/result/chunks/0`)).toEqual(
      answer.result,
    );
    expect(await cp.client.request("POST", `/api/2.0/sql/statements/${id}/cancel`)).toEqual({});

    const beyond = await refusal("GET", `/api/2.0/sql/statements/${id}/result/chunks/1`);
    expect([beyond.status, beyond.errorCode]).toEqual([400, "INVALID_PARAMETER_VALUE"]);
    expect(beyond.message).toContain("one chunk, index 0");
  });

  it("answers a failed statement's status again, and refuses its result with the way out", async () => {
    const answer = await cp.client.executeStatement({ statement: "SELECT * FROM main.nowhere.table_x" });
    expect(answer.status.state).toBe("FAILED");
    expect(await cp.client.request("GET", `/api/2.0/sql/statements/${answer.statement_id}`)).toEqual(answer);
    const chunk = await refusal("GET", `/api/2.0/sql/statements/${answer.statement_id}/result/chunks/0`);
    expect([chunk.status, chunk.errorCode]).toEqual([409, "INVALID_STATE"]);
    expect(chunk.message).toContain("ended FAILED");
  });

  it("refuses an unknown statement with 404 and a malformed id before it reaches a key", async () => {
    const unknown = await refusal("GET", "/api/2.0/sql/statements/00000000-0000-4000-8000-000000000000");
    expect([unknown.status, unknown.errorCode]).toEqual([404, "RESOURCE_DOES_NOT_EXIST"]);
    expect(unknown.message).toContain("keeps a statement's answer for 24 hours");
    for (const path of [
      "/api/2.0/sql/statements/..%2Ftables",
      "/api/2.0/sql/statements/not-a-uuid/cancel",
      "/api/2.0/sql/statements/00000000-0000-4000-8000-000000000000/result/chunks/x",
    ]) {
      const malformed = await refusal(path.endsWith("cancel") ? "POST" : "GET", path);
      expect([malformed.status, malformed.errorCode]).toEqual([400, "INVALID_PARAMETER_VALUE"]);
    }
  });
});
