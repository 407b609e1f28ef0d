import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { topCommand } from "./command-catalogue.ts";
import { DefinitionError } from "../pipeline/errors.ts";
import { readDefinitionText } from "../pipeline/parse-definition.ts";
import { connect, type ConnectionOptions } from "./api-connection.ts";
import type { EditResult, IgnoredSetting } from "../client/ebb-client.ts";
import { formatJsonLines, formatTable, tableWidth } from "./output-format.ts";
import { UsageError } from "./usage-error.ts";
import { addDeployCommand } from "./deploy-command.ts";

/**
 * `ebb pipelines create|list|get|update|delete` and `ebb stop`, over the API. A definition file is
 * YAML or JSON with the settings at the top (`name`, `catalog`, `schema`, `configuration`,
 * `continuous`) and the `datasets`; the CLI sends it in the API's shape.
 */

export type Out = (text: string) => void;
type Json = { json?: boolean };

export async function definitionBody(file: string): Promise<Record<string, unknown>> {
  const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(
      `cannot read the definition file ${file}: ${READ_FAILURES[error.code ?? ""] ?? error.message}`,
    );
  });
  let value: Record<string, unknown>;
  try {
    value = readDefinitionText(text) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof DefinitionError) {
      const issues = error.issues.map((issue) =>
        issue.path ? `${issue.path}: ${issue.message}` : issue.message,
      );
      throw new UsageError(`the definition file ${file}: ${issues.join("; ")}`);
    }
    throw error;
  }
  const { datasets, ...settings } = value;
  return { ...settings, definition: { datasets } };
}

const READ_FAILURES: Readonly<Record<string, string>> = {
  ENOENT: "no such file",
  EISDIR: "it is a folder, not a file",
  EACCES: "permission denied",
};

/** One object (a pipeline, an update, an onset): indented JSON, which reads well and parses too. */
export function printObject(out: Out, value: unknown, _json?: boolean): void {
  out(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * The settings Ebb accepted but does not act on, on stderr: stdout stays the id alone, for
 * `id=$(ebb pipelines create …)`.
 */
function warnIgnored(err: Out, ignored: readonly IgnoredSetting[] | undefined): void {
  for (const { field, reason } of ignored ?? []) err(`ebb: ignored setting ${field}: ${reason}\n`);
}

/** An edit's answer: the settings ignored, and what the edit may do to data (its `warnings`). */
function warnEdited(err: Out, edited: EditResult): void {
  warnIgnored(err, edited.ignored_settings);
  for (const { message } of edited.warnings ?? []) err(`ebb: warning: ${message}\n`);
}

export function addPipelineCommands(program: Command, out: Out, err: Out): void {
  const pipelines = topCommand(program, "pipelines");
  addDeployCommand(program, out, {
    created: (ignored) => warnIgnored(err, ignored),
    edited: (edited) => warnEdited(err, edited),
  });

  pipelines
    .command("create <file>")
    .description(
      "create a pipeline from a YAML or JSON definition; prints its id (and the settings Ebb ignores)",
    )
    .option("--json", "print the answer as JSON")
    .action(async (file: string, options: Json, command: Command) => {
      const created = await api(command).createPipeline(await definitionBody(file));
      out(options.json ? `${JSON.stringify(created)}\n` : `${created.pipeline_id}\n`);
      if (!options.json) warnIgnored(err, created.ignored_settings);
    });

  pipelines
    .command("list")
    .description("every pipeline, newest first")
    .option("--json", "one JSON object per pipeline")
    .action(async (options: Json, command: Command) => {
      const { statuses } = await api(command).listPipelines();
      if (options.json) return out(formatJsonLines(statuses));
      const rows = statuses.map((status) => {
        const latest = status.latest_updates?.[0];
        return {
          pipeline_id: status.pipeline_id,
          name: status.name,
          state: status.state,
          version: status.definition_version,
          latest_update: latest ? `${latest.state} ${new Date(latest.creation_time).toISOString()}` : "",
        };
      });
      out(formatTable(rows, { width: tableWidth(command), keep: ["pipeline_id"] }));
    });

  pipelines
    .command("get <pipeline-id>")
    .description("settings, definition version, state, latest updates and rewind status")
    .option("--json", "print as JSON")
    .action(async (pipelineId: string, options: Json, command: Command) => {
      printObject(out, await api(command).getPipeline(pipelineId), options.json);
    });

  pipelines
    .command("update <pipeline-id> <file>")
    .description("deploy a new definition version from a YAML or JSON file")
    .option("--json", "print the answer as JSON")
    .action(async (pipelineId: string, file: string, options: Json, command: Command) => {
      const body = await definitionBody(file);
      delete body["catalog"];
      delete body["schema"];
      const edited = await api(command).editPipeline(pipelineId, body);
      out(options.json ? `${JSON.stringify(edited)}\n` : `definition version ${edited.definition_version}\n`);
      if (!options.json) warnEdited(err, edited);
    });

  pipelines
    .command("delete <pipeline-id>")
    .description("delete the pipeline (its tables are kept unless --purge)")
    .option("--purge", "also delete its tables")
    .action(async (pipelineId: string, options: { purge?: boolean }, command: Command) => {
      await api(command).deletePipeline(pipelineId, options.purge ?? false);
      out(`deleted ${pipelineId}\n`);
    });

  topCommand(program, "stop").action(async (pipelineId: string, _options: unknown, command: Command) => {
    await api(command).stopPipeline(pipelineId);
    out(`stopped ${pipelineId}\n`);
  });
}

/** The client for a command, from the global `--endpoint` / `--token`. */
export function api(command: Command) {
  return connect(command.optsWithGlobals<ConnectionOptions>());
}
