import { DuckDBInstance, type DuckDBConnection, type DuckDBValue, type JS } from "@duckdb/node-api";

/**
 * One DuckDB database and connection, opened for a unit of work and closed after it. The Delta
 * reader uses it to decode parquet (checkpoints and data files); the engine reuses it with a
 * sandboxed `config` (e.g. `enable_external_access: "false"` once the files are in place).
 */
export interface DuckSessionOptions {
  /** DuckDB configuration options, passed as given (see DuckDB's `duckdb_settings()`). */
  readonly config?: Readonly<Record<string, string>>;
}

/** A row as DuckDB's JS converter gives it: BIGINT as bigint, DECIMAL as number, DATE as Date. */
export type DuckRow = Record<string, JS>;

/** Two threads keep an embedded engine from taking every core of a shared host by default. */
const DEFAULT_CONFIG: Readonly<Record<string, string>> = { threads: "2" };

export class DuckSession {
  #opening: Promise<{ readonly instance: DuckDBInstance; readonly connection: DuckDBConnection }> | undefined;
  #open: { readonly instance: DuckDBInstance; readonly connection: DuckDBConnection } | undefined;
  #closed = false;

  private constructor(private readonly options: DuckSessionOptions) {}

  static async open(options: DuckSessionOptions = {}): Promise<DuckSession> {
    const session = new DuckSession(options);
    await session.#connected();
    return session;
  }

  /**
   * A session that starts DuckDB on its first statement: a unit of work that finds nothing to do
   * (an update's task with nothing new) never pays for an instance.
   */
  static deferred(options: DuckSessionOptions = {}): DuckSession {
    return new DuckSession(options);
  }

  #connected() {
    this.#opening ??= (async () => {
      const instance = await DuckDBInstance.create(":memory:", { ...DEFAULT_CONFIG, ...this.options.config });
      const connection = await instance.connect();
      // UTC makes casts between TIMESTAMP and TIMESTAMPTZ independent of the host's zone. It is set
      // after connecting: the ICU extension that owns the setting is not loaded at create time.
      await connection.run("SET TimeZone = 'UTC'");
      const open = { instance, connection };
      this.#open = open;
      // Closed while it was starting: nothing may use it, so it goes at once.
      if (this.#closed) this.close();
      return open;
    })();
    return this.#opening;
  }

  /** Runs statements that return nothing of interest (DDL, SET). */
  async run(sql: string, params?: DuckDBValue[]): Promise<void> {
    await (await this.#connected()).connection.run(sql, params);
  }

  /** Runs a query and returns its rows as plain JS objects. */
  async rows(sql: string, params?: DuckDBValue[]): Promise<DuckRow[]> {
    const reader = await (await this.#connected()).connection.runAndReadAll(sql, params);
    return reader.getRowObjectsJS();
  }

  /** Stops the statement executing now, if any (a session not yet started has none). */
  interrupt(): void {
    this.#open?.connection.interrupt();
  }

  close(): void {
    this.#closed = true;
    const open = this.#open;
    this.#open = undefined;
    if (!open) return;
    open.connection.closeSync();
    open.instance.closeSync();
  }
}

/** Opens a session for `work` and closes it afterwards, whatever `work` does. */
export async function withDuckSession<T>(
  work: (session: DuckSession) => Promise<T>,
  options: DuckSessionOptions = {},
): Promise<T> {
  const session = await DuckSession.open(options);
  try {
    return await work(session);
  } finally {
    session.close();
  }
}
