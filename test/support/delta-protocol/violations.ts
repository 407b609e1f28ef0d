/** One place where a table's log departs from PROTOCOL.md, named by the rule it breaks. */
export interface Violation {
  readonly rule: Rule;
  /** The commit or checkpoint version, when the violation is in one. */
  readonly version?: number;
  readonly message: string;
}

/** The rules, each a section of PROTOCOL.md the validator checks. */
export const RULES = [
  "log.file-name", // "Delta Log Entries", "Checkpoint Naming Scheme"
  "log.contiguous", // versions are contiguous
  "commit.json", // one JSON object per line, one known action each ("Actions")
  "commit.first", // version 0 has protocol and metaData ("Protocol Evolution", "Change Metadata")
  "commit.reconcile", // "Delta Log Entries": no two actions that reconcile with each other
  "protocol.fields",
  "protocol.features", // versions and feature lists agree ("Table Features")
  "protocol.feature-used", // every feature the table uses is supported by its protocol
  "metaData.fields",
  "metaData.schema", // "Schema Serialization Format"
  "metaData.partitionColumns",
  "add.fields",
  "remove.fields",
  "cdc.fields",
  "txn.fields",
  "domainMetadata.fields",
  "commitInfo.fields", // "Commit Provenance Information", "In-Commit Timestamps"
  "partitionValues", // "Partition Value Serialization"
  "stats", // "Per-file Statistics"
  "checkpoint.schema", // "Checkpoints", "Checkpoint Schema"
  "checkpoint.content", // the checkpoint is the table's state at its version
  "lastCheckpoint", // "Last Checkpoint File Schema"
] as const;
export type Rule = (typeof RULES)[number];

/** Collects violations as rules find them. */
export class Findings {
  readonly list: Violation[] = [];
  add(rule: Rule, message: string, version?: number): void {
    this.list.push({ rule, message, ...(version === undefined ? {} : { version }) });
  }
}
