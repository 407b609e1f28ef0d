// @ts-check
/**
 * Lint rules that keep Ebb's import graph pointing one way, judged on resolved paths (not on how a
 * relative import happens to be spelled):
 * - `delta-front-door`: code outside `shared/delta` imports the Delta layer only through
 *   `shared/delta/index.ts`.
 * - `core-imports-no-apps`: `shared/**` (the core) imports nothing from `infra/**` or `functions/**`
 *   (the apps built on it).
 * - `folder-floors`: each folder of `shared/` imports only folders on a floor below it (`FLOORS`), so
 *   no two folders import each other, directly or round a cycle; a new folder must be given a floor.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const DELTA = "shared/delta";
const DELTA_FACE = "shared/delta/index.ts";

/**
 * The folders of `shared/`, lowest floor first: a folder may import the folders before it, never one
 * after it. A port lives on its adapters' floor or below it, so no adapter imports upwards.
 */
export const FLOORS = [
  "errors", // coded errors every layer raises
  "object-store", // the object-store port and its adapters (S3, local folder, memory)
  "duck", // DuckDB sessions and scratch space
  "sql", // Spark SQL translation and statement answers
  "pipeline", // the definition language: schema, validation, the DAG
  "project", // Spark Declarative Pipelines projects, read into the definition language
  "delta", // the Delta Lake protocol
  "store", // repositories and the event-stream port with its adapters
  "state", // flows' operator state files
  "engine", // micro-batches and flows
  "rewind", // rewind, refresh and reset
  "api", // request and response contracts
  "control", // the control plane: API handlers' and the state machine's logic
  "client", // the HTTP client
  "mcp", // the MCP server, on the client
  "cli", // the command line, on all of them
];

/** @param {string} file a path relative to the repository root @returns {string | undefined} */
const sharedFolder = (file) => /^shared\/([^/]+)\//.exec(file)?.[1];

/** @param {string} file a path relative to the repository root @param {string} folder */
const inside = (file, folder) => file === folder || file.startsWith(`${folder}/`);

/**
 * A rule that calls `check(importer, target)` for every relative import, export-from and dynamic
 * import, both relative to the repository root, and reports the message id it returns.
 * @param {Record<string, string>} messages
 * @param {(importer: string, target: string) => string | { messageId: string; data: Record<string, string> } | undefined} check
 * @returns {import("eslint").Rule.RuleModule}
 */
function importRule(messages, check) {
  return {
    meta: { type: "problem", messages, schema: [] },
    create(context) {
      const importer = path.relative(ROOT, context.filename).split(path.sep).join("/");
      /** @param {import("estree").Node & { source?: unknown }} node */
      const visit = (node) => {
        const source = /** @type {{ type?: string; value?: unknown } | null | undefined} */ (node.source);
        if (source?.type !== "Literal" || typeof source.value !== "string") return;
        const spec = source.value;
        if (!spec.startsWith(".")) return;
        const target = path
          .relative(ROOT, path.resolve(path.dirname(context.filename), spec))
          .split(path.sep)
          .join("/");
        const found = check(importer, target);
        if (found === undefined) return;
        const { messageId, data } = typeof found === "string" ? { messageId: found, data: {} } : found;
        context.report({ node: source, messageId, data: { ...data, target } });
      };
      return {
        ImportDeclaration: visit,
        ExportNamedDeclaration: visit,
        ExportAllDeclaration: visit,
        ImportExpression: visit,
      };
    },
  };
}

export const layering = {
  rules: {
    "delta-front-door": importRule(
      { internal: "{{target}} is internal to the Delta layer: import it from shared/delta/index.ts." },
      (importer, target) =>
        !inside(importer, DELTA) && inside(target, DELTA) && target !== DELTA_FACE ? "internal" : undefined,
    ),
    "core-imports-no-apps": importRule(
      {
        app: "shared/ is the core and must not import the apps ({{target}}): move what both need into shared/.",
      },
      (importer, target) =>
        inside(importer, "shared") && (inside(target, "infra") || inside(target, "functions"))
          ? "app"
          : undefined,
    ),
    "folder-floors": importRule(
      {
        up: "shared/{{from}} is on a floor below shared/{{to}} and must not import it ({{target}}): move what both need down, or pass it in as a port (eslint-rules/layering.js FLOORS).",
        unplaced: "shared/{{folder}} has no floor: add it to FLOORS in eslint-rules/layering.js.",
      },
      (importer, target) => {
        const from = sharedFolder(importer);
        const to = sharedFolder(target);
        if (from === undefined || to === undefined || from === to) return undefined;
        if (!FLOORS.includes(from)) return { messageId: "unplaced", data: { folder: from } };
        if (!FLOORS.includes(to)) return { messageId: "unplaced", data: { folder: to } };
        return FLOORS.indexOf(to) > FLOORS.indexOf(from)
          ? { messageId: "up", data: { from, to } }
          : undefined;
      },
    ),
  },
};
