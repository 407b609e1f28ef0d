// The `ebb` CLI built to JavaScript, so a command starts without compiling TypeScript (tsx took
// seconds to load it). The build is cached under node_modules/.cache/ebb-cli/, keyed by a hash of
// every source it was built from: a source edited since is a different key, so a stale build never
// runs; the next command builds again (esbuild, about a second). `npm ci` builds it once (`prepare`).
// Plain JavaScript: it runs before anything can load TypeScript.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const ENTRY = "shared/cli/main.ts";
/** Attempts at a build no source changed during (each is checked after it ends). */
const ATTEMPTS = 3;

/**
 * @typedef {{ root: string; cacheDir: string }} BuildPlace
 * `root`: the repository (ENTRY and the sources, relative to it); `cacheDir`: where builds are kept.
 */

/** @type {BuildPlace} */
export const DEFAULT_PLACE = { root: REPO, cacheDir: path.join(REPO, "node_modules", ".cache", "ebb-cli") };

/**
 * The file URL of the built CLI (its module exports `runCli`) for the sources as they are now,
 * building it if needed; undefined when esbuild is not installed (a production install).
 * @param {BuildPlace} place
 * @returns {Promise<string | undefined>}
 */
export async function builtCli(place = DEFAULT_PLACE) {
  const current = currentBuild(place);
  if (current) return pathToFileURL(current).href;
  const esbuild = await import("esbuild").catch(() => undefined);
  if (!esbuild) return undefined;
  return pathToFileURL(await build(esbuild, place)).href;
}

/**
 * The build of the sources as they are now, if there is one.
 * @param {BuildPlace} place
 */
function currentBuild(place) {
  try {
    const inputs = JSON.parse(readFileSync(path.join(place.cacheDir, "inputs.json"), "utf8"));
    const main = path.join(place.cacheDir, hashOf(inputs, place.root), "main.js");
    return existsSync(main) ? main : undefined;
  } catch {
    // No build yet, or one of its sources is gone: build again.
    return undefined;
  }
}

/**
 * Builds into a staging folder, then moves it to the key of the sources it read (a concurrent `ebb`
 * sees a whole build or none), and records those sources for the next lookup.
 * @param {typeof import("esbuild")} esbuild
 * @param {BuildPlace} place
 * @returns {Promise<string>} the path of the built main.js
 */
async function build(esbuild, place) {
  mkdirSync(place.cacheDir, { recursive: true });
  for (let attempt = 1; ; attempt++) {
    const staging = path.join(place.cacheDir, `.staging-${process.pid}-${Date.now()}`);
    const started = Date.now();
    const result = await esbuild.build({
      absWorkingDir: place.root,
      entryPoints: [ENTRY],
      outdir: staging,
      bundle: true,
      // Each `import()` of a command group is a chunk of its own, loaded only when a command needs it.
      splitting: true,
      format: "esm",
      platform: "node",
      target: "node20",
      // Packages load from node_modules at run time (DuckDB's native binding cannot be bundled).
      packages: "external",
      sourcemap: "linked",
      metafile: true,
      logLevel: "error",
    });
    const inputs = Object.keys(result.metafile.inputs).sort();
    // A source saved while esbuild read it may be in the build as it was: build again.
    const changedDuring = inputs.some((file) => statSync(path.join(place.root, file)).mtimeMs >= started);
    if (changedDuring && attempt < ATTEMPTS) {
      rmSync(staging, { recursive: true, force: true });
      continue;
    }
    const target = path.join(place.cacheDir, hashOf(inputs, place.root));
    try {
      renameSync(staging, target);
    } catch (error) {
      // Another `ebb` built the same sources first: its build is this one.
      if (!existsSync(target)) throw error;
      rmSync(staging, { recursive: true, force: true });
    }
    const record = path.join(place.cacheDir, `.inputs-${process.pid}.json`);
    writeFileSync(record, JSON.stringify(inputs));
    renameSync(record, path.join(place.cacheDir, "inputs.json"));
    return path.join(target, "main.js");
  }
}

/**
 * The key of a build: its sources' paths and contents, and this builder's own.
 * @param {readonly string[]} inputs paths relative to `root`
 * @param {string} root
 */
function hashOf(inputs, root) {
  const hash = createHash("sha256").update(readFileSync(fileURLToPath(import.meta.url)));
  for (const file of inputs) hash.update(`\0${file}\0`).update(readFileSync(path.join(root, file)));
  return hash.digest("hex").slice(0, 24);
}

// `node shared/cli/cli-build.mjs` (the `prepare` script): build now, so the first `ebb` is fast too.
if (process.argv[1] && pathToFileURL(path.resolve(process.argv[1])).href === import.meta.url) {
  // Never fails an install: without a build, `ebb` builds on its first command or runs through tsx.
  try {
    if (!(await builtCli()))
      console.warn("esbuild is not installed: `ebb` will run its TypeScript through tsx");
  } catch (error) {
    console.warn(`the ebb CLI was not built (its first command builds it): ${error.message}`);
  }
}
