import { describe, expect, it } from "vitest";
import { toErrorResponse } from "../../../shared/api/error-response.ts";
import { MAX_BODY_BYTES, parseWith, readJsonBody } from "../../../shared/api/request-body.ts";
import { pipelineIdParam, tableNameParam, updateIdParam } from "../../../shared/api/resource-names.ts";
import {
  createPipelineBody,
  editPipelineBody,
  listEventsQuery,
  noQuery,
  startUpdateBody,
  tableChangesQuery,
} from "../../../shared/api/request-schemas.ts";
import { PipelineBusyError, RewindPointNotFoundError } from "../../../shared/rewind/errors.ts";
import { PipelineNotFoundError } from "../../../shared/store/errors.ts";

describe("request bodies", () => {
  it("reads a JSON object; an empty body is {}", () => {
    expect(readJsonBody('{"cause": "API_CALL"}')).toEqual({ cause: "API_CALL" });
    expect(readJsonBody(Buffer.from('{"a":1}').toString("base64"), true)).toEqual({ a: 1 });
    expect(readJsonBody(null)).toEqual({});
    expect(readJsonBody("")).toEqual({});
  });

  it.each([["{not json"], ["[1,2]"], ["42"], ["null"]])("refuses %s as MALFORMED_REQUEST", (body) => {
    expect(() => readJsonBody(body)).toThrow(expect.objectContaining({ errorCode: "MALFORMED_REQUEST" }));
  });

  it("refuses a body over 1 MiB with 413", () => {
    const body = JSON.stringify({ pad: "x".repeat(MAX_BODY_BYTES) });
    let caught: unknown;
    try {
      readJsonBody(body);
    } catch (error) {
      caught = error;
    }
    expect(toErrorResponse(caught).status).toBe(413);
  });

  it("refuses an unknown field by name and normalizes enums", () => {
    expect(() => parseWith(startUpdateBody, { full_refersh: true })).toThrow('"full_refersh"');
    expect(() => parseWith(startUpdateBody, { full_refersh: true })).toThrow(
      expect.objectContaining({ errorCode: "INVALID_PARAMETER_VALUE" }),
    );
    const parsed = parseWith(startUpdateBody, { refresh: "full", reset_mode: "truncate" });
    expect(parsed).toMatchObject({
      refresh: "FULL",
      reset_mode: "TRUNCATE",
      cause: "USER_ACTION",
    });
  });

  it("says where datasets sent beside the settings go", () => {
    for (const schema of [createPipelineBody, editPipelineBody])
      expect(() => parseWith(schema, { name: "p", datasets: [] })).toThrow(
        'unknown field "datasets"; the datasets go inside definition: {"name": …, "definition": {"datasets": […]}}',
      );
  });

  it("takes the seed's request bodies verbatim", () => {
    const body = {
      cause: "USER_ACTION",
      rewind_spec: {
        rewind_timestamp: "2026-09-29 08:36:55",
        datasets: [{ identifier: "catalog.schema.table", cascade: true, reset_checkpoints: true }],
        dry_run: false,
      },
    };
    expect(parseWith(startUpdateBody, body).rewind_spec).toEqual(body.rewind_spec);
  });

  it("coerces query-string numbers and refuses unknown query parameters", () => {
    expect(parseWith(tableChangesQuery, { starting_version: "3", max_results: "10" })).toEqual({
      starting_version: 3,
      max_results: 10,
    });
    expect(() => parseWith(listEventsQuery, { fitler: "level='INFO'" })).toThrow('"fitler"');
    expect(() => parseWith(listEventsQuery, { max_results: "0" })).toThrow("max_results: must be at least 1");
    expect(() => parseWith(noQuery, { verbose: "1" })).toThrow(
      'unknown field "verbose"; none are allowed here',
    );
  });

  it.each([["1e3"], ["0x10"], [" 5"], [""], ["1.5"], ["-1"]])(
    "takes query numbers in decimal digits only: refuses max_results=%j",
    (value) => {
      expect(() => parseWith(listEventsQuery, { max_results: value })).toThrow(
        "max_results: must be a whole number in decimal digits",
      );
    },
  );

  it("says a repeated query parameter was given more than once", () => {
    expect(() => parseWith(listEventsQuery, { max_results: ["1", "2"] })).toThrow(
      "max_results: is given more than once: send it once",
    );
    expect(() => parseWith(tableChangesQuery, { starting_version: ["1", "2"] })).toThrow("more than once");
  });
});

describe("path parameters", () => {
  it("accepts ids and table names, and refuses anything that could escape a prefix", () => {
    expect(pipelineIdParam("0b0e7c1e-6a8e-4f7e-9b8f-3f1d2c3b4a59")).toBe(
      "0b0e7c1e-6a8e-4f7e-9b8f-3f1d2c3b4a59",
    );
    expect(updateIdParam("01KB8ZJ8Y4ABCDEFGHJKMNPQRS")).toBe("01KB8ZJ8Y4ABCDEFGHJKMNPQRS");
    expect(tableNameParam("Main.Sales.Orders")).toEqual({
      catalog: "main",
      schema: "sales",
      table: "orders",
    });
    for (const bad of ["../x", "a/b", "..", ""]) {
      expect(() => pipelineIdParam(bad)).toThrow(
        expect.objectContaining({ errorCode: "INVALID_PARAMETER_VALUE" }),
      );
      expect(() => updateIdParam(bad)).toThrow(
        expect.objectContaining({ errorCode: "INVALID_PARAMETER_VALUE" }),
      );
    }
    for (const bad of [
      "main.sales",
      "main.sales.orders.x",
      "main..orders",
      "main.sa/les.orders",
      "main.sales.%2e%2e",
    ]) {
      expect(() => tableNameParam(bad)).toThrow(
        expect.objectContaining({ errorCode: "INVALID_PARAMETER_VALUE" }),
      );
    }
  });
});

describe("errors → HTTP", () => {
  it("maps domain errors by error_code and hides unknown ones", () => {
    expect(toErrorResponse(new PipelineNotFoundError("p"))).toEqual({
      status: 404,
      body: { error_code: "RESOURCE_DOES_NOT_EXIST", message: "pipeline p does not exist" },
    });
    expect(toErrorResponse(new PipelineBusyError("U1")).status).toBe(409);
    expect(toErrorResponse(new RewindPointNotFoundError("x")).body.error_code).toBe(
      "INVALID_REWIND_SPECIFICATION.REWIND_POINT_NOT_FOUND",
    );
    const hidden = toErrorResponse(new Error("secret table arn:aws:…"));
    expect(hidden).toEqual({
      status: 500,
      body: { error_code: "INTERNAL_ERROR", message: expect.not.stringContaining("secret") },
    });
  });
});
