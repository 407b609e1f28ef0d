import { describe, expect, it } from "vitest";
import { commitTimestamp, findCommitInfo, parseCommitFile } from "../../../shared/delta/log/commit-file.ts";
import { InvalidLogFileError } from "../../../shared/delta/errors.ts";

describe("commit files", () => {
  it("parses one action per line, skipping blank lines and unknown action kinds", () => {
    const text = [
      '{"commitInfo":{"timestamp":5}}',
      "",
      '{"add":{"path":"a"}}',
      '{"someFutureAction":{}}',
      "",
    ].join("\n");
    const actions = parseCommitFile(text, "00.json");
    expect(actions).toEqual([{ commitInfo: { timestamp: 5 } }, { add: { path: "a" } }]);
    expect(findCommitInfo(actions)).toEqual({ timestamp: 5 });
  });

  it("names the file and line of invalid JSON", () => {
    const parse = () =>
      parseCommitFile('{"add":{"path":"a"}}\n{"add":', "_delta_log/00000000000000000003.json");
    expect(parse).toThrow(InvalidLogFileError);
    expect(parse).toThrow(/00000000000000000003\.json line 2: not valid JSON/);
  });

  it("refuses lines that are not one action object", () => {
    expect(() => parseCommitFile("[1,2]", "f")).toThrow(/line 1: an action must be a JSON object/);
    expect(() => parseCommitFile('{"add":{"path":"a"},"remove":{"path":"a"}}', "f")).toThrow(
      /one action per line/,
    );
    expect(() => parseCommitFile('{"add":null}', "f")).toThrow(/add must be a JSON object/);
  });

  it("takes the in-commit timestamp, else the file time (as the protocol and Spark do)", () => {
    expect(commitTimestamp({ inCommitTimestamp: 3, timestamp: 2 }, 1)).toBe(3);
    expect(commitTimestamp({ timestamp: 2 }, 1)).toBe(1);
    expect(commitTimestamp(undefined, 1)).toBe(1);
  });
});
