/**
 * The layering lint rules, run through ESLint with the repository's own config: an import that
 * breaks a rule is reported, the allowed form of the same import is not.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const eslint = new ESLint({ cwd: root });

/** The layering rule ids ESLint reports for `code` placed at `file` (relative to the root). */
async function layeringErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return (result?.messages ?? [])
    .map((message) => message.ruleId ?? "")
    .filter((id) => id.startsWith("layering/"));
}

describe("layering lint rules", () => {
  it("refuses a Delta internal imported from outside shared/delta, and allows the front door", async () => {
    expect(
      await layeringErrors(
        "shared/engine/example.ts",
        'import { loadSnapshot } from "../delta/read/snapshot-loader.ts";\nexport const f = loadSnapshot;\n',
      ),
    ).toEqual(["layering/delta-front-door"]);
    expect(
      await layeringErrors(
        "test/integration/example.test.ts",
        'export const m = await import("../../shared/delta/errors.ts");\n',
      ),
    ).toEqual(["layering/delta-front-door"]);
    expect(
      await layeringErrors(
        "shared/engine/example.ts",
        'import { loadSnapshot } from "../delta/index.ts";\nexport const f = loadSnapshot;\n',
      ),
    ).toEqual([]);
    expect(
      await layeringErrors(
        "shared/delta/read/example.ts",
        'import { loadSnapshot } from "./snapshot-loader.ts";\nexport const f = loadSnapshot;\n',
      ),
    ).toEqual([]);
  });

  it("refuses an import of infra/ or functions/ from shared/", async () => {
    expect(
      await layeringErrors(
        "shared/store/example.ts",
        'import { PIPELINES_TABLE } from "../../infra/aws/ebb-storage.ts";\nexport const t = PIPELINES_TABLE;\n',
      ),
    ).toEqual(["layering/core-imports-no-apps"]);
    expect(
      await layeringErrors(
        "shared/control/example.ts",
        'export { handler } from "../../functions/start-update.ts";\n',
      ),
    ).toEqual(["layering/core-imports-no-apps"]);
    expect(
      await layeringErrors(
        "infra/aws/example.ts",
        'import { PIPELINES_TABLE } from "../../shared/store/table-schemas.ts";\nexport const t = PIPELINES_TABLE;\n',
      ),
    ).toEqual([]);
  });

  it("refuses an import that runs up the folder floors, dynamic ones too, and allows one that runs down", async () => {
    // The three back-imports that made the six-folder cycle, each now refused.
    expect(
      await layeringErrors(
        "shared/store/example.ts",
        'import type { EventStreams } from "../engine/micro-batch.ts";\nexport type E = EventStreams;\n',
      ),
    ).toEqual(["layering/folder-floors"]);
    expect(
      await layeringErrors(
        "shared/pipeline/example.ts",
        'export const delta = () => import("../delta/index.ts");\n',
      ),
    ).toEqual(["layering/folder-floors"]);
    expect(
      await layeringErrors(
        "shared/duck/example.ts",
        'export { ObjectNotFoundError } from "../store/errors.ts";\n',
      ),
    ).toEqual(["layering/folder-floors"]);
    expect(
      await layeringErrors(
        "shared/engine/example.ts",
        'import type { EventStreams } from "../store/event-streams.ts";\nexport type E = EventStreams;\n',
      ),
    ).toEqual([]);
  });

  it("refuses an import from or into a shared/ folder that has no floor", async () => {
    expect(
      await layeringErrors(
        "shared/newfolder/example.ts",
        'export { CodedError } from "../errors/coded-error.ts";\n',
      ),
    ).toEqual(["layering/folder-floors"]);
  });
});
