import { ENVIRONMENT } from "../../../functions/runtime/environment.ts";
import { DEFAULT_TASK_SIZE, taskEnvironment } from "../../../shared/engine/task-sizing.ts";
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { API_ROUTES } from "../../../infra/aws/api-routes.ts";
import { PROJECT_ROOT } from "../../../infra/aws/function-defaults.ts";
import { loadSynthesizedEbb } from "../../../infra/local/ebb-synthesis-cache.ts";
import {
  localFunctionArn,
  templateFunctions,
  templateRoutes,
  templateSchedules,
  templateStateMachine,
  tokenResolver,
} from "../../../infra/local/template-functions.ts";

/**
 * The local runtime reads routes, functions, schedule and state machine out of the synthesized
 * template (no second definition): every route of api-routes.ts comes back, every task of the ASL
 * names a function of the stack whose handler module exists.
 */
const ebb = await loadSynthesizedEbb();
const names = Object.fromEntries(Object.values(ebb.logicalIds).map((id) => [id, `local-${id}`]));
const resolve = tokenResolver(ebb.template, names, "us-east-1");

describe("the local runtime's view of the synthesized stack", () => {
  it("serves exactly the stack's routes", () => {
    const routes = templateRoutes(ebb.template).map((r) => `${r.method} ${r.path}`);
    expect(routes.sort()).toEqual(API_ROUTES.map((r) => `${r.method} ${r.path}`).sort());
  });

  it("finds every function's handler module and resolves its environment to local names", () => {
    const functions = templateFunctions(ebb.template, resolve);
    expect(functions.length).toBe(API_ROUTES.length + 10);
    for (const fn of functions) {
      expect(existsSync(path.join(PROJECT_ROOT, fn.entry)), fn.entry).toBe(true);
      // Resource references resolve to local names; the task functions' sizing limits are literals.
      const sizing = taskEnvironment(DEFAULT_TASK_SIZE);
      for (const [name, value] of Object.entries(fn.environment)) {
        if (name in sizing) expect(value, name).toBe(sizing[name]);
        // No event bus locally: lifecycle events go to the webhook (docs/events.md).
        else if (name === ENVIRONMENT.eventBus) expect(value, name).toBe("");
        else expect(value, name).toMatch(/^(local-|arn:aws:states:)/);
      }
    }
  });

  it("runs the synthesized state machine, each task a function of the stack", () => {
    const { definition } = templateStateMachine(ebb.template, resolve);
    const text = JSON.stringify(definition);
    const ids = new Set(templateFunctions(ebb.template, resolve).map((fn) => fn.logicalId));
    const resources = [...text.matchAll(/"Resource":"([^"]+)"/g)].map((m) => m[1]!);
    expect(resources.length).toBeGreaterThanOrEqual(9);
    for (const resource of resources) {
      const id = resource.split(":").at(-1)!;
      expect(ids.has(id)).toBe(true);
      expect(resource).toBe(localFunctionArn("us-east-1", id));
    }
    expect(text).not.toContain("Fn::");
  });

  it("fires the capture schedule hourly", () => {
    expect(templateSchedules(ebb.template)).toEqual([
      { functionId: expect.stringMatching(/CaptureRewindPoints/), intervalMs: 3_600_000 },
    ]);
  });
});
