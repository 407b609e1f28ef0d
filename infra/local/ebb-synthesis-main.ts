import { mkdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { synthesizeEbb } from "./ebb-synthesis.ts";

/**
 * `node ebb-synthesis-main.ts <file>`: synthesizes the Ebb stack into `<file>` (JSON, written whole
 * then renamed, so a concurrent reader never sees half of it). Run as its own process so the CDK is
 * never loaded into, and leaves no handles in, a long-lived one (the vitest main process).
 */
const file = process.argv[2];
if (!file) {
  console.error("usage: ebb-synthesis-main.ts <file>");
  process.exit(2);
}
await mkdir(path.dirname(file), { recursive: true });
const partial = `${file}.${process.pid}.tmp`;
await writeFile(partial, JSON.stringify(synthesizeEbb()));
await rename(partial, file);
