/**
 * Delta log actions, one closed union mirroring the wire JSON (PROTOCOL.md "Actions"). Each commit
 * file is newline-delimited JSON with one action per line, keyed by its kind:
 * `{"add": {...}}`, `{"remove": {...}}`, ...
 */

/** `protocol` (PROTOCOL.md "Protocol Evolution"). */
export interface Protocol {
  readonly minReaderVersion: number;
  readonly minWriterVersion: number;
  readonly readerFeatures?: readonly string[];
  readonly writerFeatures?: readonly string[];
}

/** `metaData` (PROTOCOL.md "Change Metadata"). */
export interface Metadata {
  readonly id: string;
  readonly name?: string | null;
  readonly description?: string | null;
  readonly format: { readonly provider: string; readonly options: Readonly<Record<string, string>> };
  /** The table schema as a JSON string (PROTOCOL.md "Schema Serialization Format"). */
  readonly schemaString: string;
  readonly partitionColumns: readonly string[];
  readonly createdTime?: number | null;
  readonly configuration: Readonly<Record<string, string>>;
}

/** Per-file statistics as written in `add.stats` (a JSON string on the wire). */
export interface FileStats {
  readonly numRecords: number;
  readonly minValues?: Readonly<Record<string, unknown>>;
  readonly maxValues?: Readonly<Record<string, unknown>>;
  readonly nullCount?: Readonly<Record<string, unknown>>;
  readonly tightBounds?: boolean;
}

/** `add` (PROTOCOL.md "Add File and Remove File"). `path` is a URL-encoded relative (or absolute) URI. */
export interface AddFile {
  readonly path: string;
  readonly partitionValues: Readonly<Record<string, string | null>>;
  readonly size: number;
  readonly modificationTime: number;
  readonly dataChange: boolean;
  /** JSON-encoded `FileStats`. */
  readonly stats?: string | null;
  readonly tags?: Readonly<Record<string, string>> | null;
  readonly deletionVector?: unknown;
  readonly baseRowId?: number | null;
  readonly defaultRowCommitVersion?: number | null;
  readonly clusteringProvider?: string | null;
}

/** `remove`: a tombstone; the file stays on storage until VACUUM. */
export interface RemoveFile {
  readonly path: string;
  readonly deletionTimestamp?: number | null;
  readonly dataChange: boolean;
  readonly extendedFileMetadata?: boolean;
  readonly partitionValues?: Readonly<Record<string, string | null>> | null;
  readonly size?: number | null;
  readonly stats?: string | null;
  readonly tags?: Readonly<Record<string, string>> | null;
  readonly deletionVector?: unknown;
}

/** `cdc` (PROTOCOL.md "Add CDC File"): change rows for a commit, under `_change_data/`. */
export interface AddCdcFile {
  readonly path: string;
  readonly partitionValues: Readonly<Record<string, string | null>>;
  readonly size: number;
  readonly dataChange: boolean;
  readonly tags?: Readonly<Record<string, string>> | null;
}

/** `txn` (PROTOCOL.md "Transaction Identifiers"): the latest version an application committed. */
export interface Txn {
  readonly appId: string;
  readonly version: number;
  readonly lastUpdated?: number | null;
}

/** `commitInfo` (PROTOCOL.md "Commit Provenance Information"): free-form, as Delta writes it. */
export interface CommitInfo {
  readonly timestamp?: number;
  readonly inCommitTimestamp?: number;
  readonly operation?: string;
  readonly operationParameters?: Readonly<Record<string, unknown>>;
  readonly operationMetrics?: Readonly<Record<string, unknown>>;
  readonly readVersion?: number;
  readonly isBlindAppend?: boolean;
  readonly engineInfo?: string;
  readonly [key: string]: unknown;
}

/** `domainMetadata` (PROTOCOL.md "Domain Metadata"). */
export interface DomainMetadata {
  readonly domain: string;
  readonly configuration: string;
  readonly removed: boolean;
}

export type Action =
  | { readonly protocol: Protocol }
  | { readonly metaData: Metadata }
  | { readonly add: AddFile }
  | { readonly remove: RemoveFile }
  | { readonly cdc: AddCdcFile }
  | { readonly txn: Txn }
  | { readonly commitInfo: CommitInfo }
  | { readonly domainMetadata: DomainMetadata };

export const ACTION_KINDS = [
  "protocol",
  "metaData",
  "add",
  "remove",
  "cdc",
  "txn",
  "commitInfo",
  "domainMetadata",
] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];
