import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { readDefinitionText } from "../pipeline/parse-definition.ts";
import { connect, type ConnectionOptions } from "./api-connection.ts";
import { formatJsonLines, formatTable } from "./output-format.ts";

/**
 * `ebb pipelines create|list|get|update|delete` and `ebb stop`, over the API. A definition file is
 * YAML or JSON with the settings at the top (`name`, `catalog`, `schema`, `configuration`,
 * `continuous`) and the `datasets`; the CLI sends it in the API's shape.
 */

export type Out = (text: string) => void;
type Json = { json?: boolean };

export async function definitionBody(file: string): Promise<Record<string, unknown>> {
  const value = readDefinitionText(await readFile(file, "utf8")) as Record<string, unknown>;
  const { datasets, ...settings } = value;
  return { ...settings, definition: { datasets } };
}

/** One object (a pipeline, an update, an onset): indented JSON, which reads well and parses too. */
export function printObject(out: Out, value: unknown, _json?: boolean): void {
  out(`${JSON.stringify(value, null, 2)}\n`);
}

export function addPipelineCommands(program: Command, out: Out): void {
  const pipelines = program.command("pipelines").description("create, list, read, edit and delete pipelines");

  pipelines
    .command("create <file>")
    .description("create a pipeline from a YAML or JSON definition; prints its id")
    .option("--json", "print the answer as JSON")
    .action(async (file: string, options: Json, command: Command) => {
      const created = await api(command).createPipeline(await definitionBody(file));
      out(options.json ? `${JSON.stringify(created)}\n` : `${created.pipeline_id}\n`);
    });

  pipelines
    .command("list")
    .description("every pipeline, newest first")
    .option("--json", "one JSON object per pipeline")
    .action(async (options: Json, command: Command) => {
      const { statuses } = await api(command).listPipelines();
      out(options.json ? formatJsonLines(statuses) : formatTable(statuses));
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
    });

  pipelines
    .command("delete <pipeline-id>")
    .description("delete the pipeline (its tables are kept unless --purge)")
    .option("--purge", "also delete its tables")
    .action(async (pipelineId: string, options: { purge?: boolean }, command: Command) => {
      await api(command).deletePipeline(pipelineId, options.purge ?? false);
      out(`deleted ${pipelineId}\n`);
    });

  program
    .command("stop <pipeline-id>")
    .description("stop the running update (it ends CANCELED)")
    .action(async (pipelineId: string, _options: unknown, command: Command) => {
      await api(command).stopPipeline(pipelineId);
      out(`stopped ${pipelineId}\n`);
    });
}

/** The client for a command, from the global `--endpoint` / `--token`. */
export function api(command: Command) {
  return connect(command.optsWithGlobals<ConnectionOptions>());
}
