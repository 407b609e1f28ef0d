import { ProvisioningError } from "./errors.ts";
import { LOCAL_ACCOUNT } from "./template-functions.ts";

/**
 * The synthesized state machine for a Step Functions that cannot run the stack's Lambda functions
 * (LocalStack's Lambda provider needs Docker): each task state's `Resource`, a function of the stack,
 * becomes an activity that this process serves with the same handler (activity-step-functions.ts).
 * Nothing else in the definition changes, so the Retry and Catch lists, the Maps, the Choices and the
 * payloads are the ones AWS runs; an activity task receives the state's input as the function would.
 */

type States = Record<string, Record<string, unknown>>;

const FUNCTION_ARN = new RegExp(`^arn:aws:lambda:[^:]+:${LOCAL_ACCOUNT}:function:(.+)$`);

/** The stack's functions the definition's task states invoke (Map item processors' included), each once. */
export function taskFunctionIds(definition: Record<string, unknown>): string[] {
  const ids = new Set<string>();
  visitTasks(definition, (name, state) => ids.add(functionIdOf(name, state)));
  return [...ids];
}

/** The definition with each task's function replaced by its activity's ARN (`activityArns`: function id → ARN). */
export function withActivityTasks(
  definition: Record<string, unknown>,
  activityArns: ReadonlyMap<string, string>,
): Record<string, unknown> {
  const copy = structuredClone(definition);
  visitTasks(copy, (name, state) => {
    const functionId = functionIdOf(name, state);
    const arn = activityArns.get(functionId);
    if (arn === undefined)
      throw new ProvisioningError(`task ${name}: no activity for function ${functionId}`);
    state["Resource"] = arn;
  });
  return copy;
}

function functionIdOf(name: string, state: Record<string, unknown>): string {
  const resource = String(state["Resource"]);
  const match = FUNCTION_ARN.exec(resource);
  if (!match)
    throw new ProvisioningError(`task ${name} runs ${resource}, which is not a function of the stack`);
  return match[1] as string;
}

function visitTasks(
  definition: Record<string, unknown>,
  visit: (name: string, state: Record<string, unknown>) => void,
): void {
  const walk = (states: States) => {
    for (const [name, state] of Object.entries(states)) {
      if (state["Type"] === "Task") visit(name, state);
      const processor = (state["ItemProcessor"] ?? state["Iterator"]) as { States?: States } | undefined;
      if (processor?.States) walk(processor.States);
    }
  };
  walk(definition["States"] as States);
}
