import { featuresUsed, protocolShapeProblems, supports, type ProtocolAction } from "./feature-rules.ts";
import { schemaProblems, topFields, type SchemaField } from "./schema-fields.ts";
import { statsProblems } from "./stats-rules.ts";
import { partitionValueProblem } from "./typed-values.ts";
import type { Findings } from "./violations.ts";

/**
 * The rules of one commit file (PROTOCOL.md "Delta Log Entries", "Actions", "Table Features"),
 * checked against the table state before it, which `applyCommit` then moves forward.
 */

const ACTION_KINDS = [
  "protocol",
  "metaData",
  "add",
  "remove",
  "cdc",
  "txn",
  "commitInfo",
  "domainMetadata",
  "checkpointMetadata",
  "sidecar",
];

type Json = Record<string, unknown>;

/** The table as replayed so far: what each commit is checked against. */
export interface TableState {
  protocol?: ProtocolAction;
  metaData?: Json;
  fields: SchemaField[];
  /** Live files by path, as their `add` actions. */
  readonly files: Map<string, Json>;
  /** Tombstones by path, as their `remove` actions. */
  readonly tombstones: Map<string, Json>;
  readonly txns: Map<string, Json>;
  readonly domains: Map<string, Json>;
}

export function emptyState(): TableState {
  return { fields: [], files: new Map(), tombstones: new Map(), txns: new Map(), domains: new Map() };
}

/** The actions of a commit file, one per line; an unparsable line is reported and skipped. */
export function parseCommit(
  text: string,
  version: number,
  findings: Findings,
): { kind: string; action: Json }[] {
  const actions: { kind: string; action: Json }[] = [];
  text.split("\n").forEach((line, index) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return findings.add("commit.json", `line ${index + 1} is not JSON`, version);
    }
    const keys = typeof value === "object" && value !== null ? Object.keys(value) : [];
    if (keys.length !== 1 || !ACTION_KINDS.includes(keys[0]!)) {
      return findings.add(
        "commit.json",
        `line ${index + 1} is not one known action: ${line.slice(0, 80)}`,
        version,
      );
    }
    const action = (value as Json)[keys[0]!];
    if (typeof action !== "object" || action === null)
      return findings.add("commit.json", `line ${index + 1}'s action is not an object`, version);
    actions.push({ kind: keys[0]!, action: action as Json });
  });
  return actions;
}

/** Whether Ebb wrote the commit: only its own commits are held to the rules. */
export function writtenByEbb(actions: readonly { kind: string; action: Json }[]): boolean {
  const info = actions.find((a) => a.kind === "commitInfo")?.action;
  return typeof info?.engineInfo === "string" && info.engineInfo.startsWith("Ebb/");
}

/** Checks one commit against the state before it. */
export function checkCommit(
  version: number,
  actions: readonly { kind: string; action: Json }[],
  state: TableState,
  findings: Findings,
): void {
  const add = (rule: Parameters<Findings["add"]>[0], message: string) => findings.add(rule, message, version);
  const count = (kind: string) => actions.filter((a) => a.kind === kind).length;
  if (version === 0 && (count("protocol") !== 1 || count("metaData") !== 1))
    add("commit.first", "version 0 must hold one protocol and one metaData action");
  for (const kind of ["protocol", "metaData", "commitInfo"])
    if (count(kind) > 1) add("commit.reconcile", `more than one ${kind} action`);
  const seen = new Set<string>();
  const appIds = new Set<string>();
  for (const { kind, action } of actions) {
    if ((kind === "add" || kind === "remove") && typeof action.path === "string") {
      const key = `${action.path}\u0000${JSON.stringify(action.deletionVector ?? null)}`;
      if (seen.has(key)) add("commit.reconcile", `path ${action.path} appears in more than one add/remove`);
      seen.add(key);
    }
    if (kind === "txn" && typeof action.appId === "string") {
      if (appIds.has(action.appId)) add("commit.reconcile", `more than one txn for appId ${action.appId}`);
      appIds.add(action.appId);
    }
  }

  const protocol = actions.find((a) => a.kind === "protocol")?.action;
  if (protocol) checkProtocolFields(protocol, add);
  const metaData = actions.find((a) => a.kind === "metaData")?.action;
  let fields = state.fields;
  let partitionColumns = (state.metaData?.partitionColumns as string[] | undefined) ?? [];
  let configuration = (state.metaData?.configuration as Record<string, string> | undefined) ?? {};
  if (metaData) {
    const parsed = checkMetadataFields(metaData, add);
    if (parsed) ({ fields, partitionColumns, configuration } = parsed);
  }
  const effective = (protocol as ProtocolAction | undefined) ?? state.protocol;

  const byName = new Map(fields.map((f) => [f.name, f]));
  const known = metaData !== undefined || state.metaData !== undefined;
  const checkPartitionValues = (kind: string, action: Json, required: boolean) => {
    if (!known) return;
    const values = action.partitionValues;
    if (values === undefined || values === null) {
      if (required)
        add(`${kind}.fields` as "add.fields", `${kind} ${String(action.path)} has no partitionValues`);
      return;
    }
    if (typeof values !== "object")
      return add("partitionValues", `${kind} ${String(action.path)}: partitionValues is not a map`);
    const keys = Object.keys(values);
    const missing = partitionColumns.filter((c) => !keys.includes(c));
    const extra = keys.filter((k) => !partitionColumns.includes(k));
    if (missing.length || extra.length) {
      add(
        "partitionValues",
        `${kind} ${String(action.path)}: keys ${JSON.stringify(keys)} are not the partition columns ${JSON.stringify(partitionColumns)}`,
      );
    }
    for (const [column, value] of Object.entries(values as Json)) {
      if (value === null) continue;
      if (typeof value !== "string") {
        add("partitionValues", `${kind} ${String(action.path)}: ${column} is not a string or null`);
        continue;
      }
      const field = byName.get(column);
      const problem = field && partitionValueProblem(field.type, value);
      if (problem) add("partitionValues", `${kind} ${String(action.path)}: ${column}: ${problem}`);
    }
  };
  const checkStats = (kind: string, action: Json) => {
    if (!known) return;
    if (action.stats === undefined || action.stats === null) return;
    if (typeof action.stats !== "string")
      return add("stats", `${kind} ${String(action.path)}: stats is not a JSON string`);
    for (const problem of statsProblems(action.stats, fields))
      add("stats", `${kind} ${String(action.path)}: ${problem}`);
  };

  for (const { kind, action } of actions) {
    const rule = `${kind}.fields` as "add.fields";
    const need = (name: string, test: (v: unknown) => boolean, what: string, optional = false) => {
      const value = action[name];
      if (value === undefined || (optional && value === null)) {
        if (!optional) add(rule, `${kind} has no ${name}`);
      } else if (!test(value)) add(rule, `${kind}.${name} ${JSON.stringify(value)} is not ${what}`);
    };
    switch (kind) {
      case "add":
        need("path", isPath, "a relative path or URI");
        need("size", isCount, "a non-negative whole number");
        need("modificationTime", isWhole, "a whole number of milliseconds");
        need("dataChange", isBoolean, "a boolean");
        need("tags", isStringMap, "a map of strings", true);
        need("baseRowId", isWhole, "a whole number", true);
        need("defaultRowCommitVersion", isWhole, "a whole number", true);
        checkPartitionValues(kind, action, true);
        checkStats(kind, action);
        break;
      case "remove":
        need("path", isPath, "a relative path or URI");
        need("dataChange", isBoolean, "a boolean");
        need("deletionTimestamp", isWhole, "a whole number of milliseconds", true);
        need("extendedFileMetadata", isBoolean, "a boolean", true);
        need("size", isCount, "a non-negative whole number", true);
        need("tags", isStringMap, "a map of strings", true);
        if (
          action.extendedFileMetadata === true &&
          (action.size === undefined || action.partitionValues === undefined)
        ) {
          add(
            rule,
            `remove ${String(action.path)}: extendedFileMetadata is true without size and partitionValues`,
          );
        }
        checkPartitionValues(kind, action, false);
        checkStats(kind, action);
        break;
      case "cdc":
        need("path", isPath, "a relative path or URI");
        need("size", isCount, "a non-negative whole number");
        need("dataChange", (v) => v === false, "false");
        need("tags", isStringMap, "a map of strings", true);
        checkPartitionValues(kind, action, true);
        break;
      case "txn":
        need("appId", (v) => typeof v === "string" && v !== "", "a non-empty string");
        need("version", isWhole, "a whole number");
        need("lastUpdated", isWhole, "a whole number of milliseconds", true);
        break;
      case "domainMetadata":
        need("domain", (v) => typeof v === "string" && v !== "", "a non-empty string");
        need("configuration", (v) => typeof v === "string", "a string");
        need("removed", isBoolean, "a boolean");
        break;
      case "commitInfo":
        need("timestamp", isWhole, "a whole number of milliseconds");
        need("operation", (v) => typeof v === "string" && v !== "", "a non-empty string");
        need(
          "operationParameters",
          (v) => typeof v === "object" && v !== null && !Array.isArray(v),
          "an object",
        );
        need("operationMetrics", isStringMap, "a map of strings", true);
        need("readVersion", isWhole, "a whole number", true);
        need("isBlindAppend", isBoolean, "a boolean", true);
        break;
    }
  }

  // Features: what the table uses after this commit must be supported by its protocol.
  if (effective) {
    const used = featuresUsed(configuration, fields, {
      domainMetadata: count("domainMetadata") > 0,
      cdc: count("cdc") > 0,
      deletionVector: actions.some((a) => a.kind === "add" && a.action.deletionVector != null),
      rowTracking: actions.some((a) => a.kind === "add" && a.action.baseRowId != null),
    });
    for (const [feature, why] of used) {
      if (!supports(effective, feature)) {
        add(
          "protocol.feature-used",
          `${why}, but protocol (${effective.minReaderVersion},${effective.minWriterVersion}) does not support ${feature}`,
        );
      }
    }
    for (const [key, side] of [
      ["delta.minReaderVersion", "minReaderVersion"],
      ["delta.minWriterVersion", "minWriterVersion"],
    ] as const) {
      const wanted = configuration[key];
      if (wanted !== undefined && !(Number(wanted) <= effective[side])) {
        add("protocol.feature-used", `${key} is ${wanted}, but the protocol's ${side} is ${effective[side]}`);
      }
    }
    if (
      supports(effective, "inCommitTimestamp") &&
      configuration["delta.enableInCommitTimestamps"] === "true"
    ) {
      const first = actions[0];
      if (first?.kind !== "commitInfo" || !isWhole(first.action.inCommitTimestamp)) {
        add(
          "commitInfo.fields",
          "in-commit timestamps are enabled: commitInfo must come first with inCommitTimestamp",
        );
      }
    }
  }
}

/** Moves `state` past the commit. */
export function applyCommit(actions: readonly { kind: string; action: Json }[], state: TableState): void {
  for (const { kind, action } of actions) {
    const path = String(action.path);
    if (kind === "protocol") state.protocol = action as unknown as ProtocolAction;
    else if (kind === "metaData") {
      state.metaData = action;
      try {
        state.fields = topFields(JSON.parse(String(action.schemaString)));
      } catch {
        state.fields = [];
      }
    } else if (kind === "add") {
      state.files.set(path, action);
      state.tombstones.delete(path);
    } else if (kind === "remove") {
      state.files.delete(path);
      state.tombstones.set(path, action);
    } else if (kind === "txn") state.txns.set(String(action.appId), action);
    else if (kind === "domainMetadata") {
      if (action.removed === true) state.domains.delete(String(action.domain));
      else state.domains.set(String(action.domain), action);
    }
  }
}

function checkProtocolFields(
  protocol: Json,
  add: (rule: "protocol.fields" | "protocol.features", message: string) => void,
): void {
  const { minReaderVersion, minWriterVersion, readerFeatures, writerFeatures } = protocol;
  if (!Number.isInteger(minReaderVersion) || !Number.isInteger(minWriterVersion)) {
    return add("protocol.fields", "minReaderVersion and minWriterVersion must be whole numbers");
  }
  for (const [name, list] of [
    ["readerFeatures", readerFeatures],
    ["writerFeatures", writerFeatures],
  ] as const) {
    if (list !== undefined && (!Array.isArray(list) || list.some((f) => typeof f !== "string"))) {
      return add("protocol.fields", `${name} is not a list of names`);
    }
  }
  for (const problem of protocolShapeProblems(protocol as unknown as ProtocolAction))
    add("protocol.features", problem);
}

function checkMetadataFields(
  metaData: Json,
  add: (rule: "metaData.fields" | "metaData.schema" | "metaData.partitionColumns", message: string) => void,
): { fields: SchemaField[]; partitionColumns: string[]; configuration: Record<string, string> } | undefined {
  if (typeof metaData.id !== "string" || metaData.id === "")
    add("metaData.fields", "metaData.id is not a non-empty string");
  const format = metaData.format as Json | undefined;
  if (format?.provider !== "parquet")
    add("metaData.fields", `metaData.format.provider is ${JSON.stringify(format?.provider)}, not "parquet"`);
  if (!isStringMap(format?.options))
    add("metaData.fields", "metaData.format.options is not a map of strings");
  if (!isStringMap(metaData.configuration))
    add("metaData.fields", "metaData.configuration is not a map of strings");
  if (metaData.createdTime !== undefined && metaData.createdTime !== null && !isWhole(metaData.createdTime))
    add("metaData.fields", "metaData.createdTime is not a whole number");
  for (const name of ["name", "description"]) {
    if (metaData[name] !== undefined && metaData[name] !== null && typeof metaData[name] !== "string")
      add("metaData.fields", `metaData.${name} is not a string`);
  }
  if (typeof metaData.schemaString !== "string")
    return void add("metaData.fields", "metaData.schemaString is not a string");
  let schema: unknown;
  try {
    schema = JSON.parse(metaData.schemaString);
  } catch {
    return void add("metaData.schema", "schemaString is not JSON");
  }
  for (const problem of schemaProblems(schema)) add("metaData.schema", problem);
  const fields = topFields(schema);
  const partitionColumns = metaData.partitionColumns;
  if (!Array.isArray(partitionColumns) || partitionColumns.some((c) => typeof c !== "string")) {
    add("metaData.partitionColumns", "partitionColumns is not a list of names");
    return { fields, partitionColumns: [], configuration: {} };
  }
  for (const column of partitionColumns as string[]) {
    const field = fields.find((f) => f.name === column);
    if (!field) add("metaData.partitionColumns", `partition column ${column} is not a top-level column`);
    else if (typeof field.type !== "string" || field.type === "void" || field.type === "variant") {
      add("metaData.partitionColumns", `partition column ${column} is not of a primitive type`);
    }
  }
  return {
    fields,
    partitionColumns: partitionColumns as string[],
    configuration: (metaData.configuration as Record<string, string>) ?? {},
  };
}

const isWhole = (v: unknown): boolean => Number.isSafeInteger(v);
const isCount = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;
const isBoolean = (v: unknown): boolean => typeof v === "boolean";
const isPath = (v: unknown): boolean => typeof v === "string" && v !== "" && !v.startsWith("/");
const isStringMap = (v: unknown): boolean =>
  typeof v === "object" &&
  v !== null &&
  !Array.isArray(v) &&
  Object.values(v).every((x) => typeof x === "string");
