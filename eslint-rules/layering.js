// @ts-check
/**
 * Lint rules that keep Ebb's import graph pointing one way, judged on resolved paths (not on how a
 * relative import happens to be spelled):
 * - `delta-front-door`: code outside `shared/delta` imports the Delta layer only through
 *   `shared/delta/index.ts`.
 * - `core-imports-no-apps`: `shared/**` (the core) imports nothing from `infra/**` or `functions/**`
 *   (the apps built on it).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const DELTA = "shared/delta";
const DELTA_FACE = "shared/delta/index.ts";

/** @param {string} file a path relative to the repository root @param {string} folder */
const inside = (file, folder) => file === folder || file.startsWith(`${folder}/`);

/**
 * A rule that calls `check(importer, target)` for every relative import, export-from and dynamic
 * import, both relative to the repository root, and reports the message id it returns.
 * @param {Record<string, string>} messages
 * @param {(importer: string, target: string) => string | undefined} check
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
        const messageId = check(importer, target);
        if (messageId !== undefined) context.report({ node: source, messageId, data: { target } });
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
  },
};
