import { executeRewind, type RewindResult } from "./rewind-execution.ts";
import type { RewindEnvironment } from "./rewind-environment.ts";
import { planRewind, type RewindPlan } from "./rewind-plan.ts";
import type { RewindSpec } from "./rewind-spec.ts";

/**
 * A rewind update from a parsed `rewind_spec` (semantics.md "Doing the rewind"): plan with every
 * check, then execute (a dry run records its summary only). A failed plan changes nothing and blocks
 * nothing; a failure while executing leaves the pipeline rewind-blocked.
 */
export async function runRewind(
  env: RewindEnvironment,
  spec: RewindSpec,
  updateId: string,
): Promise<{ readonly plan: RewindPlan; readonly result: RewindResult }> {
  const plan = await planRewind(env, spec);
  const result = await executeRewind(env, plan, updateId);
  return { plan, result };
}
