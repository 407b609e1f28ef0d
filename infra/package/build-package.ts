import { execFileSync } from "node:child_process";
import { cpSync, rmSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { ENTRY_METADATA } from "../aws/ebb.ts";
import { BUNDLE_OPTIONS, FUNCTIONS_DIR, PROJECT_ROOT, prebuiltModule } from "../aws/function-defaults.ts";
import { synthesizeTemplate } from "../aws/synthesize.ts";

/**
 * `npm run build` (and so `npm pack`): Ebb as an installable package under dist/ — the construct,
 * the client and the CLI as JavaScript with declarations (tsc, tsconfig.build.json, which rewrites
 * the sources' `.ts` imports to `.js`), and every Lambda function bundled once (dist/lambda/, one
 * ES module per handler and their shared chunks), which the installed construct deploys as it is.
 */

const DIST = path.join(PROJECT_ROOT, "dist");

rmSync(DIST, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [path.join(PROJECT_ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"],
  {
    cwd: PROJECT_ROOT,
    stdio: "inherit",
  },
);

// The handlers the stack deploys, as its template names them: no second list.
const entries = Object.values(synthesizeTemplate().Resources)
  .map((resource) => (resource as { Metadata?: Record<string, string> }).Metadata?.[ENTRY_METADATA])
  .filter((entry): entry is string => entry !== undefined)
  .map((entry) => path.relative("functions", entry));

await build({
  absWorkingDir: PROJECT_ROOT,
  entryPoints: entries.map((entry) => ({ in: path.join(FUNCTIONS_DIR, entry), out: prebuiltModule(entry) })),
  outdir: path.join(DIST, "lambda"),
  outExtension: { ".js": ".mjs" },
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: BUNDLE_OPTIONS.target,
  mainFields: [...BUNDLE_OPTIONS.mainFields],
  banner: { js: BUNDLE_OPTIONS.banner },
  external: [...BUNDLE_OPTIONS.external],
  logLevel: "warning",
});

// The Spark engine's batch script and its modules, which its construct uploads (ebb-spark-engine.ts).
cpSync(path.join(FUNCTIONS_DIR, "spark"), path.join(DIST, "functions", "spark"), {
  recursive: true,
  filter: (source) => !path.extname(source) || source.endsWith(".py"),
});
console.log(`built ${path.relative(PROJECT_ROOT, DIST)}/ with ${entries.length} functions`);
