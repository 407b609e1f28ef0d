import type { DefinitionIssue } from "./errors.ts";
import { describeInterval, parseInterval } from "./duration.ts";
import { parseByteSize } from "./byte-size.ts";
import { INCREMENTAL_LISTING_MODES, type IncrementalListingMode } from "./definition-schema.ts";
import { SQL_DIALECTS, type SqlDialect } from "./sql-dialect.ts";
import { BATCH_ENGINES, type BatchEngine } from "./batch-engines.ts";

export { BATCH_ENGINES, type BatchEngine };

/**
 * The pipeline configuration keys Ebb itself reads (semantics.md "Pipeline, datasets, flows" and
 * "Doing the rewind"). Other keys are kept and passed through untouched, as Databricks does, except
 * unknown keys under Ebb's own prefixes (`OWN_PREFIXES`).
 */
export const CONFIGURATION_KEYS = {
  rewindEnabled: "pipelines.rewind.enabled",
  /** The seed's name for the same switch, accepted as an alias. */
  rewindEnabledAlias: "pipelines.rewind.betaEnabled",
  /** How long rewind points are kept (`7 days`, `interval 7 days`). */
  rewindRetention: "pipelines.rewind.retention",
  /** Accepted as an alias, in the style of Delta's `*RetentionDuration` table properties. */
  rewindRetentionAlias: "pipelines.rewind.retentionDuration",
  allowUpdateAfterIncompleteRewind: "pipelines.allowUpdateAfterIncompleteRewind",
  /**
   * Databricks' auto_loader option as a pipeline setting: how every auto_loader flow that sets no
   * `use_incremental_listing` of its own lists its path.
   */
  incrementalListing: "cloudFiles.useIncrementalListing",
  /** Which engine runs the pipeline's batches: `duckdb` (default), `spark`, or `auto` (by size). */
  engine: "pipelines.engine",
  /**
   * With `auto`: a planned batch of at least this many input bytes (`512 MB`) runs on Spark. Neither
   * threshold set: a batch above the task function's batch bytes does (the one it would split).
   */
  engineAutoBytes: "pipelines.engine.autoThresholdBytes",
  /** With `auto`: a planned batch of at least this many input records runs on Spark. */
  engineAutoRecords: "pipelines.engine.autoThresholdRecords",
  /** The dialect of the pipeline's SQL: `spark` (translated at validation) or `duckdb` (the default). */
  sqlDialect: "pipelines.sqlDialect",
} as const;

/** The pipeline's `pipelines.engine`: one engine for every batch, or `auto` by the planned size. */
export type EngineSetting =
  | { readonly kind: "fixed"; readonly engine: BatchEngine }
  | { readonly kind: "auto"; readonly minBytes?: number; readonly minRecords?: number };

/** Every batch runs on DuckDB unless the pipeline says otherwise. */
export const DEFAULT_ENGINE: EngineSetting = { kind: "fixed", engine: "duckdb" };

/** Rewind points live 7 days unless the pipeline says otherwise (semantics.md "Rewind points"). */
export const DEFAULT_REWIND_RETENTION_MS = 7 * 86_400_000;

export interface PipelineSettings {
  readonly rewindEnabled: boolean;
  readonly rewindRetentionMs: number;
  readonly allowUpdateAfterIncompleteRewind: boolean;
  /** The pipeline's `use_incremental_listing` for auto_loader flows without their own. @default the flow option's */
  readonly incrementalListing?: IncrementalListingMode;
  /** The dialect the pipeline's SQL is written in (README "The SQL dialect"). */
  readonly sqlDialect: SqlDialect;
  /** Which engine runs each batch (`pipelines.engine`). @default DuckDB */
  readonly engine?: EngineSetting;
}

export type SettingsResult =
  | { readonly ok: true; readonly settings: PipelineSettings }
  | { readonly ok: false; readonly issues: readonly DefinitionIssue[] };

/** Reads Ebb's settings from a configuration map; a value Ebb cannot read is an issue, not a default. */
export function readSettings(configuration: Readonly<Record<string, string>>): SettingsResult {
  const issues: DefinitionIssue[] = [];
  const flag = (key: string): boolean | undefined => {
    const value = configuration[key];
    if (value === undefined) return undefined;
    const normalized = value.trim().toLowerCase();
    if (normalized === "true" || normalized === "false") return normalized === "true";
    issues.push({
      path: configPath(key),
      message: `must be "true" or "false", not ${JSON.stringify(value)}`,
    });
    return undefined;
  };

  const enabled = flag(CONFIGURATION_KEYS.rewindEnabled);
  const alias = flag(CONFIGURATION_KEYS.rewindEnabledAlias);
  if (enabled !== undefined && alias !== undefined && enabled !== alias) {
    issues.push({
      path: configPath(CONFIGURATION_KEYS.rewindEnabledAlias),
      message: `contradicts ${CONFIGURATION_KEYS.rewindEnabled}: set only one of the two (${CONFIGURATION_KEYS.rewindEnabledAlias} is an alias)`,
    });
  }
  const allowAfterIncomplete = flag(CONFIGURATION_KEYS.allowUpdateAfterIncompleteRewind);

  let retention = DEFAULT_REWIND_RETENTION_MS;
  const retentionKey =
    configuration[CONFIGURATION_KEYS.rewindRetention] !== undefined
      ? CONFIGURATION_KEYS.rewindRetention
      : CONFIGURATION_KEYS.rewindRetentionAlias;
  const retentionText = configuration[retentionKey];
  const aliasText = configuration[CONFIGURATION_KEYS.rewindRetentionAlias];
  if (
    retentionKey === CONFIGURATION_KEYS.rewindRetention &&
    aliasText !== undefined &&
    aliasText !== retentionText
  ) {
    issues.push({
      path: configPath(CONFIGURATION_KEYS.rewindRetentionAlias),
      message: `contradicts ${CONFIGURATION_KEYS.rewindRetention}: set only one of the two (${CONFIGURATION_KEYS.rewindRetentionAlias} is an alias)`,
    });
  }
  if (retentionText !== undefined) {
    const parsed = parseInterval(retentionText);
    if (parsed === undefined || parsed <= 0) {
      issues.push({
        path: configPath(retentionKey),
        message: `must be a duration such as "7 days" or "interval 7 days" (units: seconds, minutes, hours, days, weeks), not ${JSON.stringify(retentionText)}; default ${describeInterval(DEFAULT_REWIND_RETENTION_MS)}`,
      });
    } else {
      retention = parsed;
    }
  }

  const listingText = configuration[CONFIGURATION_KEYS.incrementalListing];
  const listing = INCREMENTAL_LISTING_MODES.find((mode) => mode === listingText?.trim().toLowerCase());
  if (listingText !== undefined && listing === undefined) {
    issues.push({
      path: configPath(CONFIGURATION_KEYS.incrementalListing),
      message: `must be "auto", "true" or "false" (how auto_loader flows list their path; a flow's use_incremental_listing overrides it), not ${JSON.stringify(listingText)}`,
    });
  }

  const dialectText = configuration[CONFIGURATION_KEYS.sqlDialect];
  const dialect = SQL_DIALECTS.find((name) => name === dialectText?.trim().toLowerCase());
  if (dialectText !== undefined && dialect === undefined) {
    issues.push({
      path: configPath(CONFIGURATION_KEYS.sqlDialect),
      message: `must be "spark" (Spark SQL, as Databricks pipelines write it) or "duckdb" (DuckDB SQL, the default for definitions that do not say), not ${JSON.stringify(dialectText)}`,
    });
  }
  const engine = readEngine(configuration, issues);
  issues.push(...unknownOwnKeys(configuration));

  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    settings: {
      rewindEnabled: enabled ?? alias ?? false,
      rewindRetentionMs: retention,
      allowUpdateAfterIncompleteRewind: allowAfterIncomplete ?? false,
      ...(listing ? { incrementalListing: listing } : {}),
      sqlDialect: dialect ?? "duckdb",
      engine,
    },
  };
}

/** `pipelines.engine` and, for `auto`, its thresholds (none: the task function's batch bytes). */
function readEngine(
  configuration: Readonly<Record<string, string>>,
  issues: DefinitionIssue[],
): EngineSetting {
  const text = configuration[CONFIGURATION_KEYS.engine];
  const value = text?.trim().toLowerCase();
  const bytesText = configuration[CONFIGURATION_KEYS.engineAutoBytes];
  const recordsText = configuration[CONFIGURATION_KEYS.engineAutoRecords];
  if (value !== undefined && value !== "auto" && !(BATCH_ENGINES as readonly string[]).includes(value)) {
    issues.push({
      path: configPath(CONFIGURATION_KEYS.engine),
      message: `must be "duckdb", "spark" or "auto" (which engine runs the pipeline's batches), not ${JSON.stringify(text)}; default "duckdb"`,
    });
    return DEFAULT_ENGINE;
  }
  if (value !== "auto") {
    for (const key of [CONFIGURATION_KEYS.engineAutoBytes, CONFIGURATION_KEYS.engineAutoRecords])
      if (configuration[key] !== undefined)
        issues.push({
          path: configPath(key),
          message: `applies only with ${CONFIGURATION_KEYS.engine} = "auto": set it, or remove this key`,
        });
    return value === undefined ? DEFAULT_ENGINE : { kind: "fixed", engine: value as BatchEngine };
  }
  const minBytes = bytesText === undefined ? undefined : parseByteSize(bytesText);
  if (bytesText !== undefined && (minBytes === undefined || minBytes <= 0))
    issues.push({
      path: configPath(CONFIGURATION_KEYS.engineAutoBytes),
      message: `must be a size such as "512 MB" or "2 GB", not ${JSON.stringify(bytesText)}`,
    });
  const minRecords = recordsText === undefined ? undefined : Number(recordsText.trim());
  if (recordsText !== undefined && !(Number.isSafeInteger(minRecords) && minRecords! > 0))
    issues.push({
      path: configPath(CONFIGURATION_KEYS.engineAutoRecords),
      message: `must be a whole number of records above 0, not ${JSON.stringify(recordsText)}`,
    });
  return {
    kind: "auto",
    ...(minBytes !== undefined && minBytes > 0 ? { minBytes } : {}),
    ...(minRecords !== undefined && Number.isSafeInteger(minRecords) && minRecords > 0 ? { minRecords } : {}),
  };
}

/**
 * The configuration prefixes only Ebb defines: a key under one that Ebb does not read is a typo
 * (`pipelines.rewind.enabeld` would leave rewind off without a word). Other keys, Databricks' own
 * `pipelines.*` included, pass through untouched.
 */
const OWN_PREFIXES = ["pipelines.rewind.", "pipelines.engine."] as const;

function unknownOwnKeys(configuration: Readonly<Record<string, string>>): DefinitionIssue[] {
  const known = new Set<string>(Object.values(CONFIGURATION_KEYS));
  return Object.keys(configuration)
    .filter((key) => !known.has(key))
    .flatMap((key) => {
      const prefix = OWN_PREFIXES.find((own) => key.startsWith(own));
      if (prefix === undefined) return [];
      const siblings = [...known].filter((name) => name.startsWith(prefix)).sort();
      return [
        {
          path: configPath(key),
          message: `is not a setting Ebb knows: the ${prefix}* settings are ${siblings.join(", ")}`,
        },
      ];
    });
}

function configPath(key: string): string {
  return `configuration[${JSON.stringify(key)}]`;
}
