import { readDefinitionText } from "../../pipeline/parse-definition.ts";
import type { PipelineSettingsBody } from "../../api/request-schemas.ts";
import { InvalidParameterError } from "../../errors/coded-error.ts";
import { readPipelineProject, readSqlFiles, type ProjectLocation } from "../../project/index.ts";

/**
 * The Databricks `CreatePipeline` / `EditPipeline` fields a user's existing script sends, resolved
 * into Ebb's settings. Pure but for reading `libraries` files, which goes through the given reader.
 *
 * 1. `schema` or its legacy name `target` (both only if equal).
 * 2. The datasets: inline `definition`, or `libraries: [{file: {path}}]` naming YAML/JSON definition
 *    files (`s3://…`, or a folder of this machine on the local runtime, as auto_loader paths), whose datasets are joined and whose settings fill what the request leaves out;
 *    or a pipeline project (`project`: a `spark-pipeline.yml` and its SQL files), or `libraries`
 *    naming SQL files (shared/project), whose settings likewise fill what the request leaves out.
 * 3. `trigger: {manual: {}}` is a triggered pipeline (`continuous` must not be true).
 * 4. Every field Ebb accepts but does not act on is reported back (`ignored_settings`), never dropped
 *    silently; fields no Databricks pipeline has are refused by the request schema before this.
 */

/** Fields of the Databricks pipeline spec that Ebb accepts and does not act on, with why. */
export const IGNORED_SETTINGS: Readonly<Record<string, string>> = {
  budget_policy_id: "Ebb has no budget policies",
  channel: "Ebb has one runtime; rewind needs no Preview channel",
  clusters: "Ebb runs flows on Lambda, not clusters",
  deployment: "deployment metadata is not kept",
  development: "Ebb has no development mode: every update is a production update",
  edition: "Ebb has one edition",
  environment: "Ebb runs no Python environment",
  event_log: "the event log is Ebb's own (GET …/events)",
  filters: "notebook filters do not apply to definition files",
  notifications: "Ebb sends no notifications: poll get-update or read the event log",
  parameters: "pipeline parameters are not supported",
  parent_path: "Ebb has no workspace folders",
  photon: "Ebb runs SQL in DuckDB",
  restart_window: "Ebb does not restart continuous pipelines on a schedule",
  root_path: "definition files are named by libraries[].file.path",
  run_as: "updates run as the control plane's role",
  serverless: "Ebb is always serverless",
  serverless_compute_id: "Ebb is always serverless",
  storage: "tables live in Ebb's bucket under tables/<catalog>/<schema>/",
  tags: "tags are not kept",
  usage_policy_id: "Ebb has no usage policies",
  id: "Ebb assigns pipeline ids",
  "trigger.cron": "scheduled triggers are not supported: start updates yourself, or set continuous",
};

export interface IgnoredSetting {
  readonly field: string;
  readonly reason: string;
}

export interface ResolvedSettings {
  readonly name?: string;
  readonly catalog?: string;
  readonly schema?: string;
  readonly configuration?: Readonly<Record<string, unknown>>;
  readonly continuous?: boolean;
  readonly datasets?: readonly unknown[];
  readonly ignored: readonly IgnoredSetting[];
  /** For a project: a definition path's file, line and column (to point validation problems into the files). */
  readonly locate?: (path: string) => ProjectLocation | undefined;
}

/** Reads a definition file: `s3://bucket/key`, or (the local runtime) an absolute path. */
export type DefinitionFileReader = (path: string) => Promise<string>;

export async function resolveDatabricksSettings(
  body: PipelineSettingsBody,
  read: DefinitionFileReader,
): Promise<ResolvedSettings> {
  const ignored = Object.keys(body)
    .filter((field) => field in IGNORED_SETTINGS)
    .map((field) => ({ field, reason: IGNORED_SETTINGS[field]! }));
  if (body.trigger?.cron !== undefined)
    ignored.push({ field: "trigger.cron", reason: IGNORED_SETTINGS["trigger.cron"]! });
  if (body.trigger?.manual !== undefined && body.continuous === true) {
    throw new InvalidParameterError("trigger.manual and continuous: true contradict: send one of them");
  }
  if (body.schema !== undefined && body.target !== undefined && body.schema !== body.target) {
    throw new InvalidParameterError(
      `schema "${body.schema}" and target "${body.target}" differ: target is the legacy name of schema; send one`,
    );
  }
  const given = (["definition", "libraries", "project"] as const).filter(
    (field) => body[field] !== undefined,
  );
  if (given.length > 1) {
    throw new InvalidParameterError(
      `send the datasets one way: inline (definition), as files (libraries) or as a pipeline project (project), not ${given.join(" and ")}`,
    );
  }
  if (body.project !== undefined || body.libraries?.some((library) => /\.sql$/i.test(library.file.path)))
    return resolveProject(body, read, ignored);
  const files = await Promise.all(
    (body.libraries ?? []).map(async (library, i) => definitionFile(await read(library.file.path), i)),
  );
  const fromFiles = Object.assign({}, ...files.map(({ datasets: _d, ...settings }) => settings)) as Record<
    string,
    unknown
  >;
  const datasets = body.libraries
    ? files.flatMap((f) => f.datasets)
    : (body.definition?.datasets as readonly unknown[] | undefined);
  return {
    ...fromFiles,
    ...definedOnly({
      name: body.name,
      catalog: body.catalog,
      schema: body.schema ?? body.target,
      configuration: body.configuration,
      continuous: body.continuous ?? (body.trigger?.manual !== undefined ? false : undefined),
      datasets,
    }),
    ignored,
  };
}

/** A pipeline project, or `libraries` naming SQL files: its settings fill what the request leaves out. */
async function resolveProject(
  body: PipelineSettingsBody,
  read: DefinitionFileReader,
  ignored: IgnoredSetting[],
): Promise<ResolvedSettings> {
  const configuration = body.configuration
    ? Object.fromEntries(Object.entries(body.configuration).map(([k, v]) => [k, String(v)]))
    : undefined;
  let project;
  if (body.project !== undefined) {
    project = readPipelineProject({
      specPath: body.project.spec_path,
      spec: body.project.spec,
      files: new Map(Object.entries(body.project.files)),
      ...definedOnly({ configuration, catalog: body.catalog, schema: body.schema ?? body.target }),
    });
  } else {
    const paths = (body.libraries ?? []).map((library) => library.file.path);
    const other = paths.find((path) => !/\.sql$/i.test(path));
    if (other !== undefined)
      throw new InvalidParameterError(
        `libraries mixes SQL files with ${other}: a pipeline's datasets come from SQL files or from definition files, not both`,
      );
    const texts = await Promise.all(paths.map(read));
    project = readSqlFiles(
      {
        name: body.name ?? "",
        ...definedOnly({ catalog: body.catalog, schema: body.schema ?? body.target, configuration }),
      },
      new Map(paths.map((path, i) => [path, texts[i]!])),
    );
  }
  const { name, catalog, schema, datasets } = project.definition;
  return {
    ...definedOnly({ name: name === "" ? undefined : name, catalog, schema, continuous: undefined }),
    ...definedOnly({
      name: body.name,
      continuous: body.continuous ?? (body.trigger?.manual !== undefined ? false : undefined),
    }),
    configuration: { ...project.definition.configuration, ...configuration },
    datasets,
    ignored: [...ignored, ...project.ignored],
    locate: project.locate,
  };
}

function definitionFile(text: string, index: number): Record<string, unknown> & { datasets: unknown[] } {
  const value = readDefinitionText(text);
  const fields = value !== null && typeof value === "object" ? (value as Record<string, unknown>) : {};
  if (!Array.isArray(fields["datasets"])) {
    throw new InvalidParameterError(`libraries[${index}]: the definition file has no datasets list`);
  }
  return fields as Record<string, unknown> & { datasets: unknown[] };
}

function definedOnly<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
