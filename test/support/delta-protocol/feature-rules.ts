import { allFields, allTypes, type SchemaField } from "./schema-fields.ts";

/**
 * Protocol versions against the features a table uses (PROTOCOL.md "Protocol Evolution", "Table
 * Features", "Writer Version Requirements", "Reader Version Requirements").
 */

export interface ProtocolAction {
  readonly minReaderVersion: number;
  readonly minWriterVersion: number;
  readonly readerFeatures?: readonly string[];
  readonly writerFeatures?: readonly string[];
}

/** Features the appendix lists ("Valid Feature Names in Table Features"), reader-writer ones marked. */
const READER_WRITER = new Set([
  "columnMapping",
  "deletionVectors",
  "timestampNtz",
  "v2Checkpoint",
  "vacuumProtocolCheck",
  "variantType",
  "variantType-preview",
  "variantShredding-preview",
  "typeWidening",
  "typeWidening-preview",
  "catalogManaged",
  "catalogOwned-preview",
]);
const WRITER_ONLY = new Set([
  "appendOnly",
  "invariants",
  "checkConstraints",
  "changeDataFeed",
  "generatedColumns",
  "identityColumns",
  "domainMetadata",
  "rowTracking",
  "inCommitTimestamp",
  "icebergCompatV1",
  "icebergCompatV2",
  "clustering",
  "allowColumnDefaults",
]);

/** The legacy writer version that implies each feature; reader-writer features also name their reader version. */
const LEGACY: Readonly<Record<string, { writer: number; reader?: number }>> = {
  appendOnly: { writer: 2 },
  invariants: { writer: 2 },
  checkConstraints: { writer: 3 },
  changeDataFeed: { writer: 4 },
  generatedColumns: { writer: 4 },
  columnMapping: { writer: 5, reader: 2 },
  identityColumns: { writer: 6 },
};

/** Problems with the protocol action itself: versions and feature lists that do not agree. */
export function protocolShapeProblems(protocol: ProtocolAction): string[] {
  const problems: string[] = [];
  const { minReaderVersion: reader, minWriterVersion: writer } = protocol;
  if (![1, 2, 3].includes(reader)) problems.push(`minReaderVersion ${reader} is not 1, 2 or 3`);
  if (!Number.isInteger(writer) || writer < 1 || writer > 7)
    problems.push(`minWriterVersion ${writer} is not 1 to 7`);
  if ((protocol.readerFeatures !== undefined) !== (reader === 3)) {
    problems.push(`readerFeatures must be present exactly when minReaderVersion is 3 (it is ${reader})`);
  }
  if ((protocol.writerFeatures !== undefined) !== (writer === 7)) {
    problems.push(`writerFeatures must be present exactly when minWriterVersion is 7 (it is ${writer})`);
  }
  if (reader === 3 && writer !== 7) problems.push("minReaderVersion 3 requires minWriterVersion 7");
  for (const feature of protocol.readerFeatures ?? []) {
    if (!READER_WRITER.has(feature))
      problems.push(`readerFeatures lists ${feature}, which is not a reader-writer feature`);
    if (!(protocol.writerFeatures ?? []).includes(feature))
      problems.push(`${feature} is in readerFeatures but not writerFeatures`);
  }
  for (const feature of protocol.writerFeatures ?? []) {
    if (!READER_WRITER.has(feature) && !WRITER_ONLY.has(feature))
      problems.push(`writerFeatures lists unknown feature ${feature}`);
    if (READER_WRITER.has(feature) && reader === 3 && !(protocol.readerFeatures ?? []).includes(feature)) {
      problems.push(`reader-writer feature ${feature} is in writerFeatures but not readerFeatures`);
    }
  }
  return problems;
}

/** Whether `protocol` supports `feature` (by its list at writer 7, by version below). */
export function supports(protocol: ProtocolAction, feature: string): boolean {
  const readerSide = READER_WRITER.has(feature);
  if (protocol.minWriterVersion === 7) {
    const writes = (protocol.writerFeatures ?? []).includes(feature);
    if (!readerSide) return writes;
    const legacyReader = LEGACY[feature]?.reader;
    const reads =
      protocol.minReaderVersion === 3
        ? (protocol.readerFeatures ?? []).includes(feature)
        : legacyReader !== undefined && protocol.minReaderVersion >= legacyReader;
    return writes && reads;
  }
  const legacy = LEGACY[feature];
  if (!legacy) return false;
  return protocol.minWriterVersion >= legacy.writer && protocol.minReaderVersion >= (legacy.reader ?? 1);
}

/** The features the table's metadata and this commit's actions use, each with why. */
export function featuresUsed(
  configuration: Readonly<Record<string, string>>,
  fields: readonly SchemaField[],
  actions: {
    readonly domainMetadata: boolean;
    readonly cdc: boolean;
    readonly deletionVector: boolean;
    readonly rowTracking: boolean;
  },
): Map<string, string> {
  const used = new Map<string, string>();
  const is = (key: string) => configuration[key]?.toLowerCase() === "true";
  if (is("delta.appendOnly")) used.set("appendOnly", "delta.appendOnly is true");
  if (is("delta.enableChangeDataFeed")) used.set("changeDataFeed", "delta.enableChangeDataFeed is true");
  if (actions.cdc) used.set("changeDataFeed", "the commit has cdc actions");
  if (is("delta.enableDeletionVectors")) used.set("deletionVectors", "delta.enableDeletionVectors is true");
  if (actions.deletionVector) used.set("deletionVectors", "a file has a deletion vector");
  if (is("delta.enableRowTracking")) used.set("rowTracking", "delta.enableRowTracking is true");
  if (actions.rowTracking) used.set("rowTracking", "a file has baseRowId");
  if (is("delta.enableInCommitTimestamps"))
    used.set("inCommitTimestamp", "delta.enableInCommitTimestamps is true");
  const mode = configuration["delta.columnMapping.mode"];
  if (mode !== undefined && mode !== "none") used.set("columnMapping", `delta.columnMapping.mode is ${mode}`);
  const constraint = Object.keys(configuration).find((key) => key.startsWith("delta.constraints."));
  if (constraint) used.set("checkConstraints", `the table has ${constraint}`);
  // Protocol-changing properties: Spark applies them to the protocol and does not store them unmet.
  for (const key of Object.keys(configuration)) {
    const feature = /^delta\.feature\.(.+)$/.exec(key)?.[1];
    if (feature) used.set(feature, `${key} is set`);
  }
  if (actions.domainMetadata) used.set("domainMetadata", "the commit has domainMetadata actions");
  for (const [path, field] of allFields(fields)) {
    if (field.metadata["delta.invariants"] !== undefined)
      used.set("invariants", `column ${path} has an invariant`);
    if (field.metadata["delta.generationExpression"] !== undefined)
      used.set("generatedColumns", `column ${path} is generated`);
    if (Object.keys(field.metadata).some((k) => k.startsWith("delta.identity.")))
      used.set("identityColumns", `column ${path} is an identity column`);
  }
  for (const type of allTypes(fields)) {
    if (type === "timestamp_ntz") used.set("timestampNtz", "a column is timestamp_ntz");
    if (type === "variant") used.set("variantType", "a column is a variant");
  }
  return used;
}
