import { DuckSession, type AnswerRow, type DuckRow } from "./duck-session.ts";
import { ScratchFolder } from "./scratch-folder.ts";
import { quoteIdentifier } from "./sql-text.ts";

/**
 * A DuckDB view over files copied into a private scratch folder: the files live as long as the
 * view. `build` fetches what it needs into the folder and returns the view's SELECT. When no session
 * is given the view opens its own, and `close()` closes it; otherwise `close()` drops the view.
 */
export class ScratchView {
  private constructor(
    readonly duck: DuckSession,
    readonly viewName: string,
    private readonly scratch: ScratchFolder,
    private readonly ownsSession: boolean,
  ) {}

  static async create(
    viewName: string,
    build: (duck: DuckSession, scratch: ScratchFolder) => Promise<string>,
    given?: DuckSession,
  ): Promise<ScratchView> {
    const duck = given ?? (await DuckSession.open());
    const view = new ScratchView(duck, viewName, ScratchFolder.deferred(), given === undefined);
    try {
      const sql = await build(duck, view.scratch);
      await duck.run(`CREATE OR REPLACE TEMP VIEW ${quoteIdentifier(viewName)} AS ${sql}`);
      return view;
    } catch (error) {
      await view.close();
      throw error;
    }
  }

  /** Every row of the view, as plain JS objects. */
  async rows(): Promise<DuckRow[]> {
    return this.duck.rows(`SELECT * FROM ${quoteIdentifier(this.viewName)}`);
  }

  /** Every row of the view as a user is answered it (exact decimals, maps as maps). */
  async answerRows(): Promise<AnswerRow[]> {
    return this.duck.answerRows(`SELECT * FROM ${quoteIdentifier(this.viewName)}`);
  }

  async close(): Promise<void> {
    try {
      if (this.ownsSession) this.duck.close();
      else await this.duck.run(`DROP VIEW IF EXISTS ${quoteIdentifier(this.viewName)}`);
    } finally {
      await this.scratch.dispose();
    }
  }
}

/** Creates the view, hands its rows back, and closes it. */
export async function readScratchView(
  viewName: string,
  build: (duck: DuckSession, scratch: ScratchFolder) => Promise<string>,
): Promise<DuckRow[]> {
  const view = await ScratchView.create(viewName, build);
  try {
    return await view.rows();
  } finally {
    await view.close();
  }
}
