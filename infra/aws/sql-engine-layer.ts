import { cpSync, existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AssetHashType, DockerImage } from "aws-cdk-lib";
import * as lambda from "aws-cdk-lib/aws-lambda";
import type { Construct } from "constructs";

/**
 * The one Lambda layer every Ebb function shares: DuckDB (its native binding for linux-x64, 70 MB)
 * and polyglot-sql (a 22 MB .wasm it loads beside its module). The functions' bundles leave these
 * packages out (`UNBUNDLED_PACKAGES`), so each function's upload is its few MB of JavaScript and the
 * cloud assembly holds DuckDB once. Lambda resolves a bundle's bare imports from the layer's
 * `nodejs/node_modules` (ES modules included, since Node.js 18).
 */

/** The packages in the layer, and the one each is installed under (a dependency of which). */
const LAYER_PACKAGES: readonly { readonly name: string; readonly from?: string }[] = [
  { name: "@duckdb/node-api" },
  { name: "@duckdb/node-bindings", from: "@duckdb/node-api" },
  // The binary Lambda's x86_64 Node.js loads (function-defaults.ts sets that architecture).
  { name: "@duckdb/node-bindings-linux-x64", from: "@duckdb/node-bindings" },
  { name: "detect-libc", from: "@duckdb/node-bindings" },
  { name: "@polyglot-sql/sdk" },
];

/** Where Ebb itself is: the repository, or the installed package (dist/infra/aws/ → its root). */
const EBB_DIR = path.dirname(fileURLToPath(import.meta.url));

/** Where Node.js would find `name` from `fromDir`: the nearest node_modules above it holding it. */
function packageDir(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", name);
    if (existsSync(path.join(candidate, "package.json"))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** Each layer package's folder, resolved as Node.js would from the package that depends on it. */
export function layerPackageDirs(): Map<string, string> {
  const dirs = new Map<string, string>();
  for (const { name, from } of LAYER_PACKAGES) {
    const fromDir = from === undefined ? EBB_DIR : dirs.get(from);
    const dir = fromDir === undefined ? undefined : packageDir(name, fromDir);
    if (dir === undefined) {
      // npm installs DuckDB's binary for the machine it runs on; Lambda needs linux-x64's.
      const bindings = dirs.get("@duckdb/node-bindings");
      const version = bindings
        ? `@${(JSON.parse(readFileSync(path.join(bindings, "package.json"), "utf8")) as { version: string }).version}`
        : "";
      throw new Error(
        `Ebb's SQL engine layer needs the npm package ${name}, which is not installed beside Ebb: ` +
          (name.endsWith("linux-x64")
            ? `add Lambda's DuckDB binary to the CDK app with \`npm install --no-save --os=linux --cpu=x64 ${name}${version}\`, or synthesize on Linux x86_64`
            : "reinstall the CDK app's dependencies (npm ci)"),
      );
    }
    dirs.set(name, dir);
  }
  return dirs;
}

/** The layer's content changes exactly when one of its packages' versions does. */
function layerHash(): string {
  const versions = LAYER_PACKAGES.filter(({ from }) => from === undefined).map(({ name }) => {
    const dir = packageDir(name, EBB_DIR);
    const version = dir
      ? (JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { version: string }).version
      : "missing";
    return `${name}@${version}`;
  });
  return ["ebb-sql-engine-layer/1", "linux-x64", ...versions].join(" ");
}

/** The shared layer, copied from node_modules by a local bundling step (no Docker). */
export function sqlEngineLayer(
  scope: Construct,
  id: string,
  runtime: lambda.Runtime,
  architecture: lambda.Architecture,
): lambda.LayerVersion {
  return new lambda.LayerVersion(scope, id, {
    description: "DuckDB (linux-x64) and polyglot-sql, shared by Ebb's functions",
    compatibleRuntimes: [runtime],
    compatibleArchitectures: [architecture],
    code: lambda.Code.fromAsset(EBB_DIR, {
      assetHashType: AssetHashType.CUSTOM,
      assetHash: layerHash(),
      bundling: {
        // Never used: the local step always succeeds or throws with the way out.
        image: DockerImage.fromRegistry("public.ecr.aws/sam/build-nodejs22.x"),
        local: {
          tryBundle(outputDir: string): boolean {
            for (const [name, dir] of layerPackageDirs()) {
              cpSync(dir, path.join(outputDir, "nodejs", "node_modules", name), {
                recursive: true,
                dereference: true,
              });
            }
            return true;
          },
        },
      },
    }),
  });
}
