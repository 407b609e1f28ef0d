import { afterAll, beforeAll } from "vitest";
import { DuckSession } from "../../shared/duck/duck-session.ts";
import { ScratchFolder } from "../../shared/duck/scratch-folder.ts";

export interface DuckAndScratch {
  readonly duck: DuckSession;
  readonly scratch: ScratchFolder;
}

/**
 * Opens a DuckDB session and a scratch folder before the tests of the file (or `describe`) it is
 * called in, hands them to `use`, and closes them after: the setup every test that writes Parquet
 * or checkpoints needs, in one place.
 */
export function openDuckAndScratch(use: (opened: DuckAndScratch) => void): void {
  let opened: DuckAndScratch | undefined;
  beforeAll(async () => {
    opened = { duck: await DuckSession.open(), scratch: await ScratchFolder.create() };
    use(opened);
  });
  afterAll(async () => {
    opened?.duck.close();
    await opened?.scratch.dispose();
  });
}
