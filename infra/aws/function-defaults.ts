import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Duration, type Size } from "aws-cdk-lib";
import * as lambda from "aws-cdk-lib/aws-lambda";
import { OutputFormat, type NodejsFunctionProps } from "aws-cdk-lib/aws-lambda-nodejs";
import { TASK_TIMEOUT_SECONDS } from "../../shared/control/updates/update-tasks.ts";

/**
 * Pure prop factories for Ebb's Lambda functions: Node.js 22 on x86_64, bundled by the local esbuild
 * (no Docker), as ES modules, leaving out DuckDB's native package and polyglot-sql, which every
 * function loads from the one shared layer (sql-engine-layer.ts; a `.node` binary cannot be bundled,
 * and the one for linux-x64 is what this architecture loads).
 */

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const FUNCTIONS_DIR = path.join(PROJECT_ROOT, "functions");
/**
 * Where the installed package keeps its functions, bundled when it was packed (`npm run build`):
 * the construct uses them as they are, so a CDK app needs neither esbuild nor Ebb's sources.
 */
export const PREBUILT_FUNCTIONS_DIR = path.join(PROJECT_ROOT, "lambda");

export const FUNCTION_RUNTIME = lambda.Runtime.NODEJS_22_X;
export const FUNCTION_ARCHITECTURE = lambda.Architecture.X86_64;

/**
 * Packages resolved at run time from the shared layer, not bundled: DuckDB's (a native binary) and
 * polyglot-sql's (it loads its .wasm file beside its module, by import.meta.url).
 */
export const UNBUNDLED_PACKAGES = [
  "@duckdb/node-api",
  "@duckdb/node-bindings",
  "@duckdb/node-bindings-linux-x64",
  "detect-libc",
  "@polyglot-sql/sdk",
] as const;

/** How a function's handler is bundled: by NodejsFunction from the sources, or by the package build. */
export const BUNDLE_OPTIONS = {
  target: "node22",
  mainFields: ["module", "main"],
  // Some dependencies still call require(); ESM bundles need it defined.
  banner:
    "import { createRequire as __ebbCreateRequire } from 'node:module'; const require = __ebbCreateRequire(import.meta.url);",
  external: UNBUNDLED_PACKAGES,
} as const;

/** Light handlers answer API calls; heavy ones run DuckDB over table data. */
export const LIGHT = { memorySize: 512, timeout: Duration.seconds(29) } as const;
/** The state machine's tasks wait for a heavy function exactly as long as it may run. */
export const HEAVY = { memorySize: 2048, timeout: Duration.seconds(TASK_TIMEOUT_SECONDS) } as const;
/** API Gateway stops waiting after 29 s, so an API handler never gets more. */
export const API_HEAVY = { memorySize: 2048, timeout: Duration.seconds(29) } as const;

export function functionProps(
  entry: string,
  size: { memorySize: number; timeout: Duration; ephemeralStorageSize?: Size },
): NodejsFunctionProps {
  return {
    entry: path.join(FUNCTIONS_DIR, entry),
    handler: "handler",
    runtime: FUNCTION_RUNTIME,
    architecture: FUNCTION_ARCHITECTURE,
    ...size,
    projectRoot: PROJECT_ROOT,
    depsLockFilePath: path.join(PROJECT_ROOT, "package-lock.json"),
    bundling: {
      forceDockerBundling: false,
      format: OutputFormat.ESM,
      target: BUNDLE_OPTIONS.target,
      mainFields: [...BUNDLE_OPTIONS.mainFields],
      banner: BUNDLE_OPTIONS.banner,
      externalModules: [...BUNDLE_OPTIONS.external],
    },
  };
}

/** `tasks/run-flow.ts` → `tasks/run-flow`: where its bundle is under PREBUILT_FUNCTIONS_DIR. */
export function prebuiltModule(entry: string): string {
  return entry.replace(/\.ts$/, "");
}

/**
 * The props of a function from the package's prebuilt bundles, or undefined when running from the
 * sources. All functions share one code asset (the bundles and their common chunks), told apart by
 * their handler.
 */
export function prebuiltFunctionProps(
  entry: string,
  size: { memorySize: number; timeout: Duration; ephemeralStorageSize?: Size },
): lambda.FunctionProps | undefined {
  const module = prebuiltModule(entry);
  if (!existsSync(path.join(PREBUILT_FUNCTIONS_DIR, `${module}.mjs`))) return undefined;
  return {
    code: lambda.Code.fromAsset(PREBUILT_FUNCTIONS_DIR),
    handler: `${module}.handler`,
    runtime: FUNCTION_RUNTIME,
    architecture: FUNCTION_ARCHITECTURE,
    ...size,
  };
}
