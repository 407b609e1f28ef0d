import type { Command } from "commander";
import { topCommand } from "./command-catalogue.ts";
import { api, printObject, type Out } from "./pipeline-commands.ts";
import { DeclinedError } from "./declined-error.ts";
import { UsageError } from "./usage-error.ts";
import type { Confirm } from "./update-commands.ts";

/**
 * `ebb rewind-cut --pipelines a,b,c --point <id> | --timestamp <t>`: several pipelines rewound to one
 * cut (POST /api/2.0/ebb/rewinds, docs/rewind-across-pipelines.md). It prints the plan; the updates
 * it starts are followed with `ebb updates get`.
 */
export function addRewindCutCommand(program: Command, out: Out, confirm: Confirm | undefined): void {
  topCommand(program, "rewind-cut")
    .requiredOption("--pipelines <ids>", "the pipelines' ids (comma-separated, any order)", (v: string) =>
      v.split(",").map((s) => s.trim()),
    )
    .option("--point <id>", "a rewind point of the cut's upstream pipeline")
    .option("--timestamp <time>", "the cut's time (UTC yyyy-MM-dd HH:mm:ss)")
    .option("--dry-run", "answer the whole plan, change nothing")
    .option("--yes", "do not ask for confirmation (needed without a terminal)")
    .option("--json", "print the answer as JSON")
    .action(async (options: CutOptions, command: Command) => {
      if (!options.dryRun && !options.yes) {
        if (!confirm)
          throw new UsageError(
            "a rewind-cut changes every named pipeline's tables and there is no terminal to confirm it: pass --yes (or --dry-run to see the plan)",
          );
        if (!(await confirm(`rewind ${options.pipelines.length} pipelines to one cut? [y/N] `)))
          throw new DeclinedError("declined: no pipeline was rewound");
      }
      const answer = await api(command).request("POST", "/api/2.0/ebb/rewinds", {
        body: {
          pipeline_ids: options.pipelines,
          ...(options.point ? { rewind_point_id: options.point } : {}),
          ...(options.timestamp ? { rewind_timestamp: options.timestamp } : {}),
          dry_run: options.dryRun === true,
        },
      });
      printObject(out, answer, options.json);
    });
}

interface CutOptions {
  pipelines: string[];
  point?: string;
  timestamp?: string;
  dryRun?: boolean;
  yes?: boolean;
  json?: boolean;
}
