import { describe, expect, it } from "vitest";
import {
  RULES,
  validateLog,
  type CheckpointContent,
  type LogContents,
  type Rule,
} from "../../support/delta-protocol/index.ts";

/**
 * The protocol validator on a hand-written log that conforms, then with each rule broken by hand:
 * every rule must fire on its own break, and none on the good log.
 */

const pad = (v: number) => String(v).padStart(20, "0");
const schema = {
  type: "struct",
  fields: [
    { name: "id", type: "long", nullable: false, metadata: {} },
    { name: "amount", type: "decimal(38,6)", nullable: true, metadata: {} },
    { name: "day", type: "date", nullable: true, metadata: {} },
    { name: "at", type: "timestamp", nullable: true, metadata: {} },
    {
      name: "s",
      type: { type: "struct", fields: [{ name: "x", type: "integer", nullable: true, metadata: {} }] },
      nullable: true,
      metadata: {},
    },
  ],
};
const info = (operation: string, timestamp: number) => ({
  commitInfo: { timestamp, operation, operationParameters: {}, isBlindAppend: true, engineInfo: "Ebb/0.1.0" },
});
// Written as text: bounds past a double's precision must survive digit for digit.
const statsText =
  '{"numRecords":2,' +
  '"minValues":{"id":9223372036854775806,"amount":12345678901234567890123456789012.000007,"day":"2026-01-01","at":"2026-01-01T00:00:00.123Z","s":{"x":1}},' +
  '"maxValues":{"id":9223372036854775807,"amount":12345678901234567890123456789012.000014,"day":"2026-01-02","at":"2026-01-01T01:00:00.123Z","s":{"x":2}},' +
  '"nullCount":{"id":0,"amount":0,"day":0,"at":0,"s":{"x":0}},"tightBounds":true}';
const add = (path: string, day: string | null) => ({
  add: { path, partitionValues: { day }, size: 100, modificationTime: 1, dataChange: true, stats: statsText },
});
type Line = Record<string, unknown>;

function goodLog(): { commits: Line[][]; checkpoint: CheckpointContent; last: Line } {
  const protocol = { minReaderVersion: 1, minWriterVersion: 4 };
  const metaData = {
    id: "0f2b",
    format: { provider: "parquet", options: {} },
    schemaString: JSON.stringify(schema),
    partitionColumns: ["day"],
    configuration: { "delta.enableChangeDataFeed": "true" },
    createdTime: 1,
  };
  const commits: Line[][] = [
    [info("CREATE TABLE", 1000), { protocol }, { metaData }, add("day=2026-01-01/a.parquet", "2026-01-01")],
    [
      info("DELETE", 2000),
      {
        remove: {
          path: "day=2026-01-01/a.parquet",
          deletionTimestamp: 2000,
          dataChange: true,
          extendedFileMetadata: true,
          partitionValues: { day: "2026-01-01" },
          size: 100,
        },
      },
      add("day=__HIVE_DEFAULT_PARTITION__/b.parquet", null),
      {
        cdc: { path: "_change_data/c.parquet", partitionValues: { day: null }, size: 10, dataChange: false },
      },
      { txn: { appId: "flow-1", version: 3, lastUpdated: 2000 } },
    ],
    [info("WRITE", 3000), add("day=2026-01-03/c.parquet", "2026-01-03")],
  ];
  const checkpoint: CheckpointContent = {
    version: 1,
    columns: new Map([
      ["txn", ["appId", "version", "lastUpdated"]],
      ["add", ["path", "partitionValues", "size", "modificationTime", "dataChange", "stats", "tags"]],
      [
        "remove",
        ["path", "deletionTimestamp", "dataChange", "extendedFileMetadata", "partitionValues", "size"],
      ],
      [
        "metaData",
        [
          "id",
          "name",
          "description",
          "format",
          "schemaString",
          "partitionColumns",
          "configuration",
          "createdTime",
        ],
      ],
      ["protocol", ["minReaderVersion", "minWriterVersion", "readerFeatures", "writerFeatures"]],
    ]),
    rows: [
      { kind: "protocol", action: protocol },
      { kind: "metaData", action: metaData },
      { kind: "txn", action: { appId: "flow-1", version: 3, lastUpdated: 2000 } },
      {
        kind: "add",
        action: { ...add("day=__HIVE_DEFAULT_PARTITION__/b.parquet", null).add, dataChange: false },
      },
      {
        kind: "remove",
        action: { path: "day=2026-01-01/a.parquet", deletionTimestamp: 2000, dataChange: false },
      },
    ],
    sizeInBytes: 1234,
  };
  return { commits, checkpoint, last: { version: 1, size: 5, sizeInBytes: 1234, numOfAddFiles: 1 } };
}

function contents(log: ReturnType<typeof goodLog>, extraNames: string[] = []): LogContents {
  const commits = new Map(
    log.commits.map((lines, v) => [v, lines.map((l) => JSON.stringify(l)).join("\n") + "\n"]),
  );
  return {
    names: [...commits.keys()]
      .map((v) => `${pad(v)}.json`)
      .concat(`${pad(1)}.checkpoint.parquet`, "_last_checkpoint", ...extraNames),
    commits,
    checkpoints: new Map([[1, log.checkpoint]]),
    lastCheckpoint: JSON.stringify(log.last),
  };
}

const rulesOf = (log: LogContents) => [...new Set(validateLog(log).map((v) => v.rule))].sort();

type Break = (log: ReturnType<typeof goodLog>) => void | LogContents;
const action = (log: ReturnType<typeof goodLog>, version: number, kind: string) =>
  log.commits[version]!.find((l) => kind in l)![kind] as Record<string, unknown>;

const BREAKS: Record<Rule, Break> = {
  "log.file-name": (log) => contents(log, ["00000000000000000003.json.tmp"]),
  "log.contiguous": (log) => {
    const c = contents(log);
    (c.commits as Map<number, string>).set(5, c.commits.get(2)!.replace("WRITE", "WRITE"));
    return { ...c, names: [...c.names, `${pad(5)}.json`] };
  },
  "commit.json": (log) => {
    log.commits[2]!.push({ add: {}, remove: {} });
  },
  "commit.first": (log) => {
    log.commits[0] = log.commits[0]!.filter((l) => !("protocol" in l));
  },
  "commit.reconcile": (log) => {
    log.commits[2]!.push(add("day=2026-01-03/c.parquet", "2026-01-03"));
  },
  "protocol.fields": (log) => {
    action(log, 0, "protocol").minWriterVersion = "4";
  },
  "protocol.features": (log) => {
    Object.assign(action(log, 0, "protocol"), { minReaderVersion: 3, readerFeatures: ["timestampNtz"] });
  },
  "protocol.feature-used": (log) => {
    action(log, 0, "protocol").minWriterVersion = 2; // the table has the change data feed on
  },
  "metaData.fields": (log) => {
    (action(log, 0, "metaData").format as Record<string, unknown>).provider = "orc";
  },
  "metaData.schema": (log) => {
    action(log, 0, "metaData").schemaString = JSON.stringify({
      type: "struct",
      fields: [...schema.fields, { name: "ID", type: "long", nullable: true, metadata: {} }],
    });
  },
  "metaData.partitionColumns": (log) => {
    action(log, 0, "metaData").partitionColumns = ["s"];
  },
  "add.fields": (log) => {
    action(log, 2, "add").size = -1;
  },
  "remove.fields": (log) => {
    delete action(log, 1, "remove").dataChange;
  },
  "cdc.fields": (log) => {
    action(log, 1, "cdc").dataChange = true;
  },
  "txn.fields": (log) => {
    action(log, 1, "txn").version = "3";
  },
  "domainMetadata.fields": (log) => {
    log.commits[2]!.push({ domainMetadata: { domain: "d", configuration: {}, removed: false } });
  },
  "commitInfo.fields": (log) => {
    action(log, 2, "commitInfo").timestamp = "3000";
  },
  partitionValues: (log) => {
    action(log, 2, "add").partitionValues = { day: "2026-1-3" };
  },
  stats: (log) => {
    const c = contents(log);
    const broken = c.commits.get(2)!.replace(/9223372036854775807/, "9223372036854776000");
    return { ...c, commits: new Map([...c.commits, [2, broken]]) };
  },
  "checkpoint.schema": (log) => {
    (log.checkpoint.columns as Map<string, string[]>).set("remove", [
      "path",
      "deletionTimestamp",
      "dataChange",
      "stats",
    ]);
  },
  "checkpoint.content": (log) => {
    (log.checkpoint.rows as CheckpointContent["rows"][number][])[0] = {
      kind: "protocol",
      action: { minReaderVersion: 1, minWriterVersion: 3 },
    };
  },
  lastCheckpoint: (log) => {
    log.last.size = 4;
  },
};

describe("protocol validator", () => {
  it("finds nothing wrong with a conforming log", () => {
    expect(validateLog(contents(goodLog()))).toEqual([]);
  });

  it.each(RULES.map((rule) => [rule]))("fires %s on a log that breaks it", (rule) => {
    const log = goodLog();
    const broken = BREAKS[rule](log) ?? contents(log);
    expect(rulesOf(broken)).toContain(rule);
  });

  it.each([
    ["a long past its type", "minValues", '"id":9223372036854775808', "outside the range of long"],
    [
      "a decimal with too many digits",
      "maxValues",
      '"amount":123456789012345678901234567890123.5',
      "does not fit decimal(38,6)",
    ],
    ["a timestamp without a zone", "minValues", '"at":"2026-01-01T00:00:00.123"', "with a zone"],
    ["a bound on a column that does not exist", "minValues", '"nope":1', "no such column"],
  ])("stats: %s", (_what, side, replacement, message) => {
    const c = contents(goodLog());
    const text = c.commits.get(2)!;
    const key = replacement.slice(1, replacement.indexOf('"', 1));
    const pattern = new RegExp(String.raw`(\\"${side}\\":\{)`);
    const escaped = JSON.stringify(replacement).slice(1, -1);
    const broken =
      key === "nope"
        ? text.replace(pattern, `$1${escaped},`)
        : text.replace(new RegExp(String.raw`(\\"${side}\\":\{)(?:[^}]*?)(\\"${key}\\":[^,}]*)`), (m) =>
            m.replace(/\\"[a-z]+\\":[^,}]*$/, escaped),
          );
    expect(broken).not.toBe(text);
    const violations = validateLog({ ...c, commits: new Map([...c.commits, [2, broken]]) });
    expect(violations.map((v) => v.message).join("\n")).toContain(message);
  });

  it.each([
    ["double", "nan", "Java can parse"],
    ["double", "inf", "Java can parse"],
    ["long", "1.0", "whole long"],
    ["boolean", "True", '"true" or "false"'],
    ["timestamp", "2026-01-01T00:00:00", "ISO 8601 in UTC"],
  ])("partitionValues: a %s written %j", (type, value, message) => {
    const log = goodLog();
    const metaData = action(log, 0, "metaData");
    metaData.schemaString = JSON.stringify({
      ...schema,
      fields: [...schema.fields, { name: "p", type, nullable: true, metadata: {} }],
    });
    metaData.partitionColumns = ["day", "p"];
    log.commits[0]!.forEach(
      (l) => "add" in l && Object.assign((l.add as Line).partitionValues as Line, { p: null }),
    );
    action(log, 1, "add").partitionValues = { day: null, p: null };
    action(log, 1, "cdc").partitionValues = { day: null, p: null };
    action(log, 1, "remove").partitionValues = { day: "2026-01-01", p: null };
    action(log, 2, "add").partitionValues = { day: "2026-01-03", p: value };
    const violations = validateLog({
      ...contents(log),
      checkpoints: new Map(),
      lastCheckpoint: undefined as never,
      names: [],
    });
    expect(violations.map((v) => `${v.rule}: ${v.message}`)).toEqual([expect.stringContaining(message)]);
  });

  it("checks a commit of another engine only as state, not against the rules", () => {
    const log = goodLog();
    action(log, 2, "commitInfo").engineInfo = "Apache-Spark/4.0.1 Delta-Lake/4.0.1";
    action(log, 2, "add").size = -1;
    expect(validateLog(contents(log))).toEqual([]);
  });
});
