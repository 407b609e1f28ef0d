import { readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * `npm run bench`: runs every `bench/*.bench.ts` in name order, or only those whose name contains
 * one of the arguments (`npm run bench -- delta`). A bench file exports `run(): Promise<void>` and
 * prints its own figures.
 */
// Lambda runs nodejs22.x; the SDK's Node 20 end-of-support warning would only interleave with the figures.
process.env["AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED"] ??= "true";

const here = path.dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);
const files = (await readdir(here))
  .filter((name) => name.endsWith(".bench.ts"))
  .filter((name) => filters.length === 0 || filters.some((filter) => name.includes(filter)))
  .sort();

for (const name of files) {
  const module = (await import(pathToFileURL(path.join(here, name)).href)) as { run?: () => Promise<void> };
  if (typeof module.run !== "function") throw new Error(`${name} does not export run()`);
  console.log(`\n## ${name}`);
  await module.run();
}
