import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { App, Stack } from "aws-cdk-lib";
import { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import { afterAll, describe, expect, it } from "vitest";
import {
  FUNCTION_ARCHITECTURE,
  FUNCTION_RUNTIME,
  LIGHT,
  UNBUNDLED_PACKAGES,
  functionProps,
} from "../../../infra/aws/function-defaults.ts";
import { sqlEngineLayer } from "../../../infra/aws/sql-engine-layer.ts";
import { buildStack } from "../../../infra/aws/synthesize.ts";

// One slim deployment: DuckDB's 70 MB binary (and polyglot-sql's 22 MB .wasm) is uploaded once, in
// one layer every function shares, instead of once per function (35+ copies made cdk.out 3.5 GB).

type Resource = { Type: string; Properties: Record<string, unknown> };
const resources = buildStack().app.synth().getStackByName("Ebb").template.Resources as Record<
  string,
  Resource
>;
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);

const outdirs: string[] = [];
afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
}

describe("the SQL engine layer", () => {
  it("is one layer, for the functions' runtime and architecture, that every function references", () => {
    const layers = ofType("AWS::Lambda::LayerVersion");
    expect(layers).toHaveLength(1);
    const [[layerId, layer]] = layers as [[string, Resource]];
    expect(layer.Properties["CompatibleRuntimes"]).toEqual([FUNCTION_RUNTIME.name]);
    expect(layer.Properties["CompatibleArchitectures"]).toEqual([FUNCTION_ARCHITECTURE.name]);
    const functions = ofType("AWS::Lambda::Function");
    expect(functions.length).toBeGreaterThan(30);
    for (const [id, fn] of functions) {
      expect({ id, layers: fn.Properties["Layers"] }).toEqual({ id, layers: [{ Ref: layerId }] });
    }
  });

  it("bundled, holds DuckDB's linux-x64 binary and polyglot-sql under nodejs/node_modules, while a function's asset holds neither", () => {
    const outdir = mkdtempSync(path.join(os.tmpdir(), "ebb-layer-"));
    outdirs.push(outdir);
    // One function built as every Ebb function is (functionProps), bundled for real by esbuild.
    const app = new App({ outdir });
    const stack = new Stack(app, "Slim");
    const layer = sqlEngineLayer(stack, "SqlEngineLayer", FUNCTION_RUNTIME, FUNCTION_ARCHITECTURE);
    new NodejsFunction(stack, "GetOpenapi", { ...functionProps("get-openapi.ts", LIGHT), layers: [layer] });
    const assembly = app.synth();
    const template = assembly.getStackByName("Slim").template as { Resources: Record<string, Resource> };
    const assetOf = (type: string) => {
      const [resource] = Object.values(template.Resources).filter((r) => r.Type === type);
      const key = type === "AWS::Lambda::LayerVersion" ? "Content" : "Code";
      const s3Key = (resource?.Properties[key] as { S3Key: string }).S3Key;
      return path.join(assembly.directory, `asset.${s3Key.replace(/\.zip$/, "")}`);
    };

    const layerFiles = filesUnder(assetOf("AWS::Lambda::LayerVersion"));
    for (const name of UNBUNDLED_PACKAGES) {
      expect(layerFiles).toContain(`nodejs/node_modules/${name}/package.json`);
    }
    expect(layerFiles).toContain("nodejs/node_modules/@duckdb/node-bindings-linux-x64/duckdb.node");

    const functionAsset = assetOf("AWS::Lambda::Function");
    const functionFiles = filesUnder(functionAsset);
    expect(
      functionFiles.filter((file) => /\.(node|so|wasm)$/.test(file) || file.includes("node_modules")),
    ).toEqual([]);
    // The bundle imports DuckDB by name, which Lambda resolves from the layer.
    expect(readFileSync(path.join(functionAsset, "index.mjs"), "utf8")).toMatch(/from\s*"@duckdb\/node-api"/);
    expect(existsSync(path.join(functionAsset, "index.mjs"))).toBe(true);
  });
});
