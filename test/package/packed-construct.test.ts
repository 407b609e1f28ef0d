import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

// The installable construct, as a CDK user gets it: `npm pack` builds Ebb (npm run build) and packs
// it; a fresh TypeScript CDK app outside the repository installs the tarball, instantiates `Ebb` with
// no props, compiles with tsc (no tsx) and synthesizes. aws-cdk-lib and the other dependencies come
// from npm's cache where the repository's install left them (--prefer-offline).

const ROOT = path.resolve(import.meta.dirname, "../..");
const work = mkdtempSync(path.join(os.tmpdir(), "ebb-packed-"));
const app = path.join(work, "app");
afterAll(() => rmSync(work, { recursive: true, force: true }));

const run = (cwd: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
  execFileSync(command, args, { cwd, encoding: "utf8", env: { ...process.env, ...env }, stdio: "pipe" });
const versionOf = (name: string) =>
  (
    JSON.parse(readFileSync(path.join(ROOT, "node_modules", name, "package.json"), "utf8")) as {
      version: string;
    }
  ).version;

/** The app `cdk init app --language typescript` makes (its tsconfig, minus jest), using Ebb. */
function writeApp(tarball: string): void {
  mkdirSync(path.join(app, "bin"), { recursive: true });
  writeFileSync(
    path.join(app, "package.json"),
    JSON.stringify({
      name: "pipelines",
      version: "0.1.0",
      private: true,
      dependencies: {
        "aws-cdk-lib": versionOf("aws-cdk-lib"),
        constructs: versionOf("constructs"),
        ebb: `file:${tarball}`,
      },
    }),
  );
  writeFileSync(
    path.join(app, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        lib: ["es2022"],
        declaration: true,
        strict: true,
        noImplicitReturns: true,
        skipLibCheck: true,
        experimentalDecorators: true,
        strictPropertyInitialization: false,
        isolatedModules: true,
        types: [],
        rootDir: ".",
        outDir: "build",
      },
      exclude: ["node_modules", "cdk.out", "build"],
    }),
  );
  writeFileSync(
    path.join(app, "bin", "pipelines.ts"),
    [
      'import * as cdk from "aws-cdk-lib";',
      'import { Ebb } from "ebb/cdk";',
      'import { EbbClient } from "ebb/client";',
      "",
      "const app = new cdk.App();",
      'const stack = new cdk.Stack(app, "PipelinesStack");',
      'const ebb = new Ebb(stack, "Ebb");',
      'new cdk.CfnOutput(stack, "ApiUrl", { value: ebb.api.url });',
      "app.synth();",
      'if (typeof EbbClient !== "function") throw new Error("ebb/client has no EbbClient");',
      "",
    ].join("\n"),
  );
}

/** Every file under `dir`, relative to it. */
const filesUnder = (dir: string) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));

describe("the packed construct", () => {
  it("installs into a fresh CDK app, compiles with tsc and synthesizes a slim deployment", () => {
    // npm pack runs prepack (npm run build), whose output would mix with --json: find the tarball.
    run(ROOT, "npm", ["pack", "--pack-destination", work]);
    const tarball = path.join(
      work,
      readdirSync(work).find((file) => file.endsWith(".tgz"))!,
    );
    writeApp(tarball);
    run(app, "npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"]);
    run(app, process.execPath, [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "."]);
    const cdkOut = path.join(app, "cdk.out");
    run(app, process.execPath, ["build/bin/pipelines.js"], { CDK_OUTDIR: cdkOut });

    type Resource = { Type: string; Properties: Record<string, unknown> };
    const template = JSON.parse(readFileSync(path.join(cdkOut, "PipelinesStack.template.json"), "utf8")) as {
      Resources: Record<string, Resource>;
    };
    const resources = Object.entries(template.Resources);
    const layers = resources.filter(([, r]) => r.Type === "AWS::Lambda::LayerVersion");
    expect(layers).toHaveLength(1);
    const ebbFunctions = resources.filter(
      ([, r]) => r.Type === "AWS::Lambda::Function" && r.Properties["Runtime"] === "nodejs22.x",
    );
    expect(ebbFunctions.length).toBeGreaterThan(30);
    // Every function runs its handler from the one prebuilt code asset, with the layer.
    const codeKeys = new Set(ebbFunctions.map(([, r]) => (r.Properties["Code"] as { S3Key: string }).S3Key));
    expect(codeKeys.size).toBe(1);
    for (const [, fn] of ebbFunctions) expect(fn.Properties["Layers"]).toEqual([{ Ref: layers[0]![0] }]);

    const assetDir = (s3Key: string) => path.join(cdkOut, `asset.${s3Key.replace(/\.zip$/, "")}`);
    const codeFiles = filesUnder(assetDir([...codeKeys][0]!));
    expect(codeFiles).toContain("tasks/run-flow.mjs");
    expect(
      codeFiles.filter((file) => file.includes("node_modules") || /\.(node|so|wasm)$/.test(file)),
    ).toEqual([]);
    const layerKey = (layers[0]![1].Properties["Content"] as { S3Key: string }).S3Key;
    expect(filesUnder(assetDir(layerKey))).toContain(
      "nodejs/node_modules/@duckdb/node-bindings-linux-x64/duckdb.node",
    );

    const bytes = Number(run(work, "du", ["-sb", cdkOut]).split("\t")[0]);
    expect(bytes).toBeLessThan(300 * 1024 * 1024);

    // The CLI the package installs runs its built JavaScript.
    const ebbVersion = (
      JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string }
    ).version;
    expect(run(app, path.join(app, "node_modules/.bin/ebb"), ["--version"]).trim()).toBe(ebbVersion);
  });
});
