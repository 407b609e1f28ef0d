import type { Command } from "commander";
import { topCommand } from "./command-catalogue.ts";
import { formatJsonLines, formatTable } from "./output-format.ts";
import { api } from "./pipeline-commands.ts";
import { followUpdate } from "./update-commands.ts";

/**
 * `ebb branch …`: a pipeline's branches (docs/branches.md) over the API. A branch is made with
 * `ebb rewind <pipeline-id> --branch <name>`.
 */
export function addBranchCommands(program: Command, out: (text: string) => void): void {
  const branch = topCommand(program, "branch");
  const json = (value: unknown) => out(`${JSON.stringify(value)}\n`);

  branch
    .command("list <pipeline-id>")
    .description("the pipeline's branches, by name")
    .option("--json", "one JSON object per branch")
    .action(async (pipelineId: string, options: { json?: boolean }, command: Command) => {
      const { branches } = await api(command).branches(pipelineId);
      if (options.json) return out(formatJsonLines(branches));
      out(
        formatTable(
          branches.map((b) => ({
            name: b.name,
            point: b.rewind_point_id ?? "",
            point_timestamp: b.point_timestamp,
            tables: b.tables.map((t) => t.name).join(", "),
          })),
        ),
      );
    });

  branch
    .command("diff <pipeline-id> <name>")
    .description("per table: rows only on the branch, only on live, and changed by key")
    .option("--json", "the whole answer as JSON")
    .action(async (pipelineId: string, name: string, options: { json?: boolean }, command: Command) => {
      const diff = await api(command).branchDiff(pipelineId, name);
      if (options.json) return json(diff);
      out(
        formatTable(
          diff.tables.map((t) => ({
            table: t.name,
            branch_version: t.branch_version,
            live_version: t.live_version,
            only_on_branch: t.only_on_branch.count,
            only_on_live: t.only_on_live.count,
            changed: t.changed?.count ?? "",
          })),
        ),
      );
    });

  branch
    .command("publish <pipeline-id> <name>")
    .description(
      "make live equal the branch: an update (one RESTORE per table, no flow runs), followed as ebb run does; undo: rewind to the point it prints",
    )
    .option("--no-wait", "print the update id and return")
    .option("--json", "the answer, then the final update, as JSON")
    .action(
      async (
        pipelineId: string,
        name: string,
        options: { json?: boolean; wait: boolean },
        command: Command,
      ) => {
        const client = api(command);
        const published = await client.publishBranch(pipelineId, name);
        if (options.json) json(published);
        else {
          out(
            formatTable(
              published.tables.map((t) => ({
                table: t.table,
                branch_version: t.branch_version,
                live_version_before: t.live_version,
              })),
            ),
          );
          if (published.rewind_point_id)
            out(`undo: ebb rewind ${pipelineId} --point ${published.rewind_point_id}\n`);
        }
        await followUpdate(
          client,
          pipelineId,
          published.update_id,
          { ...options, json: options.json ?? false },
          out,
          command,
        );
      },
    );

  branch
    .command("discard <pipeline-id> <name>")
    .description("delete the branch's logs and record (VACUUM then removes its files)")
    .action(async (pipelineId: string, name: string, _options: unknown, command: Command) => {
      await api(command).discardBranch(pipelineId, name);
      out(`discarded branch ${name} of ${pipelineId}\n`);
    });
}
