import { readdir, readFile, stat } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import type { Command } from "commander";
import picomatch from "picomatch";
import { parseDocument } from "yaml";
import { topCommand } from "./command-catalogue.ts";
import { api, type Out } from "./pipeline-commands.ts";
import type { EditResult, IgnoredSetting } from "../client/ebb-client.ts";
import { SPEC_FILE_NAMES } from "../project/index.ts";
import { UsageError } from "./usage-error.ts";

/**
 * `ebb deploy [--spec spark-pipeline.yml]`: the pipeline of a Spark Declarative Pipelines project,
 * as `spark-pipelines run` finds it (the spec in this folder or the nearest one above). The spec and
 * the files its `libraries` globs select are sent to the API (`project`), which reads them; the
 * pipeline of the spec's name is edited (a new definition version), or created if there is none.
 */

interface DeployOptions {
  readonly spec?: string;
  readonly conf: readonly string[];
  readonly pipelineId?: string;
  readonly json?: boolean;
}

export function addDeployCommand(
  program: Command,
  out: Out,
  warn: {
    readonly created: (ignored: readonly IgnoredSetting[] | undefined) => void;
    readonly edited: (edited: EditResult) => void;
  },
): void {
  topCommand(program, "deploy")
    .option("--spec <file>", "the project's spec (default: spark-pipeline.yml here or in a folder above)")
    .option("--conf <key=value>", "a configuration value over the spec's (repeatable)", collect, [])
    .option("--pipeline-id <id>", "edit this pipeline (default: the one named as the spec names it)")
    .option("--json", "print the answer as JSON")
    .action(async (options: DeployOptions, command: Command) => {
      const specPath = options.spec ? resolve(options.spec) : await findSpec(process.cwd());
      const root = dirname(specPath);
      const spec = await readFile(specPath, "utf8").catch(() => {
        throw new UsageError(`cannot read the spec ${specPath}`);
      });
      const files = await projectFiles(root, includesOf(spec));
      const body = {
        project: { spec, spec_path: relative(root, specPath), files },
        ...(options.conf.length > 0 ? { configuration: Object.fromEntries(options.conf.map(keyValue)) } : {}),
      };
      const client = api(command);
      const pipelineId = options.pipelineId ?? (await pipelineNamed(client, nameOf(spec)));
      if (pipelineId === undefined) {
        const created = await client.createPipeline(body);
        out(options.json ? `${JSON.stringify(created)}\n` : `created ${created.pipeline_id}\n`);
        if (!options.json) warn.created(created.ignored_settings);
      } else {
        const edited = await client.editPipeline(pipelineId, body);
        out(
          options.json
            ? `${JSON.stringify({ pipeline_id: pipelineId, ...edited })}\n`
            : `deployed ${pipelineId} definition version ${edited.definition_version}\n`,
        );
        if (!options.json) warn.edited(edited);
      }
    });
}

function collect(value: string, previous: readonly string[]): string[] {
  return [...previous, value];
}

function keyValue(text: string): [string, string] {
  const at = text.indexOf("=");
  if (at <= 0) throw new UsageError(`--conf ${text}: write key=value`);
  return [text.slice(0, at), text.slice(at + 1)];
}

/** The spec in `folder` or the nearest folder above, as `spark-pipelines` looks for it. */
async function findSpec(folder: string): Promise<string> {
  for (let at = folder; ; at = dirname(at)) {
    for (const name of SPEC_FILE_NAMES) {
      const path = join(at, name);
      if (
        await stat(path).then(
          (s) => s.isFile(),
          () => false,
        )
      )
        return path;
    }
    if (dirname(at) === at)
      throw new UsageError(`no ${SPEC_FILE_NAMES[0]} in ${folder} or a folder above: pass --spec <file>`);
  }
}

/** The spec's globs, read leniently: the API reads the spec in full and reports its problems. */
function includesOf(spec: string): string[] {
  const value = parseDocument(spec).toJS() as { libraries?: { glob?: { include?: unknown } }[] } | null;
  return (value?.libraries ?? []).flatMap((library) => {
    const include = library?.glob?.include;
    return typeof include === "string" ? [include] : Array.isArray(include) ? include.map(String) : [];
  });
}

function nameOf(spec: string): string | undefined {
  const value = parseDocument(spec).toJS() as { name?: unknown } | null;
  return typeof value?.name === "string" ? value.name.trim() : undefined;
}

/** The files under `root` the globs select (hidden folders and node_modules skipped), by relative path. */
async function projectFiles(root: string, include: readonly string[]): Promise<Record<string, string>> {
  const matches = picomatch(include.map((glob) => glob.replace(/^\.\//, "")));
  const entries = (await readdir(root, { recursive: true, withFileTypes: true })) as {
    name: string;
    parentPath?: string;
    path?: string;
    isFile(): boolean;
  }[];
  const files: Record<string, string> = {};
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const path = relative(root, join(entry.parentPath ?? entry.path ?? root, entry.name))
      .split(sep)
      .join("/");
    if (path.split("/").some((part) => part.startsWith(".") || part === "node_modules")) continue;
    if (matches(path)) files[path] = await readFile(join(root, path), "utf8");
  }
  return files;
}

/** The live pipeline the spec's name names; several are refused (which one is meant is unclear). */
async function pipelineNamed(
  client: ReturnType<typeof api>,
  name: string | undefined,
): Promise<string | undefined> {
  if (name === undefined) return undefined;
  const same: { pipeline_id: string }[] = [];
  let pageToken: string | undefined;
  do {
    const page = await client.listPipelines({
      max_results: 1000,
      ...(pageToken ? { page_token: pageToken } : {}),
    });
    same.push(...page.statuses.filter((status) => status.name === name));
    pageToken = page.next_page_token;
  } while (pageToken !== undefined);
  if (same.length > 1)
    throw new UsageError(
      `${same.length} pipelines are named "${name}" (${same.map((s) => s.pipeline_id).join(", ")}): pass --pipeline-id <id>`,
    );
  return same[0]?.pipeline_id;
}
