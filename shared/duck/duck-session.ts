import { DuckDBInstance, type DuckDBConnection, type DuckDBValue, type JS } from "@duckdb/node-api";
import { answerValueConverter, type AnswerValue } from "./answer-values.ts";

/**
 * One DuckDB connection, opened for a unit of work and closed after it. The Delta reader uses it to
 * decode parquet (checkpoints and data files); the engine reuses it with a sandboxed `config` (e.g.
 * `enable_external_access: "false"` once the files are in place).
 *
 * Sessions without `config` run only Ebb's own SQL and share the process's one DuckDB instance, each
 * on its own connection: an instance costs 7-30 ms to create, a connection well under 1 ms. What a
 * session makes is its connection's alone (TEMP tables and views, `SET VARIABLE`, session settings
 * such as TimeZone), so concurrent sessions cannot see or collide with each other's objects; only a
 * non-TEMP object would be shared, and Ebb creates none. A session with `config` holds an instance no
 * other session uses while it is open: settings such as `enable_external_access`, `threads` and
 * `memory_limit` are instance-wide. The instance is not always new: a sandbox's locked instance is
 * handed back (`release`) and kept for the next sandbox of the process (engine/sandbox-pool.ts).
 */
export interface DuckSessionOptions {
  /**
   * DuckDB configuration options, passed as given (see DuckDB's `duckdb_settings()`). Given, the
   * session has an instance no other open session uses. @default the process's shared instance
   */
  readonly config?: Readonly<Record<string, string>>;
}

/**
 * An instance a session handed back instead of closing (`release`), for another session to go on
 * with (`DuckSession.onInstance`): a sandbox's instance, locked, kept for the next sandbox.
 */
export type HeldInstance = DuckDBInstance;

/** A row as DuckDB's JS converter gives it: BIGINT as bigint, DECIMAL as number, DATE as Date. */
export type DuckRow = Record<string, JS>;
/** A row as an answer gives it (`answer-values.ts`). */
export type AnswerRow = Record<string, AnswerValue | null>;

/** Two threads keep an embedded engine from taking every core of a shared host by default. */
const DEFAULT_CONFIG: Readonly<Record<string, string>> = { threads: "2" };

/** The instance that sessions without `config` share; kept for the process's life, never closed. */
let sharedInstance: Promise<DuckDBInstance> | undefined;

function processInstance(): Promise<DuckDBInstance> {
  sharedInstance ??= DuckDBInstance.create(":memory:", DEFAULT_CONFIG).catch((error: unknown) => {
    // A failed start is not kept: the next session tries again.
    sharedInstance = undefined;
    throw error;
  });
  return sharedInstance;
}

/**
 * One instance created ahead for the configuration last asked for with `config`: a sandbox that finds
 * no kept instance in the pool (engine/sandbox-pool.ts) needs a new one, and creating it (7-30 ms)
 * would otherwise sit on the update's path. A request for another configuration closes the spare and creates its own.
 */
let spare: { readonly key: string; readonly instance: Promise<DuckDBInstance> } | undefined;

function createdAhead(options: Record<string, string>): Promise<DuckDBInstance> {
  const instance = DuckDBInstance.create(":memory:", options);
  // A spare that fails to start is never handed out: the request for it creates one and reports why.
  instance.catch(() => undefined);
  return instance;
}

async function ownInstance(config: Readonly<Record<string, string>>): Promise<DuckDBInstance> {
  const options = { ...DEFAULT_CONFIG, ...config };
  const key = JSON.stringify(Object.entries(options).sort(([a], [b]) => (a < b ? -1 : 1)));
  const ready = spare?.key === key ? spare.instance : undefined;
  if (spare && !ready)
    void spare.instance.then(
      (instance) => instance.closeSync(),
      () => undefined,
    );
  spare = { key, instance: createdAhead(options) };
  if (ready) {
    try {
      return await ready;
    } catch {
      // fall through: create it now, so that the error is this request's
    }
  }
  return DuckDBInstance.create(":memory:", options);
}

/**
 * A FATAL error invalidates the whole instance: later sessions get a fresh one instead of failing
 * too (sessions already on it fail as they would have).
 */
function forgetIfInvalidated(instance: DuckDBInstance, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  if (!/^FATAL Error|database has been invalidated/i.test(message)) return;
  void sharedInstance?.then((shared) => {
    if (shared === instance) sharedInstance = undefined;
  });
}

interface OpenSession {
  readonly instance: DuckDBInstance;
  readonly connection: DuckDBConnection;
  /** Whether the instance is this session's alone (closed with it). */
  readonly ownsInstance: boolean;
}

export class DuckSession {
  #opening: Promise<OpenSession> | undefined;
  #open: OpenSession | undefined;
  #closed = false;
  /** A statement of this session failed: its instance is not handed on (`release`). */
  #failed = false;

  private constructor(private readonly options: DuckSessionOptions) {}

  static async open(options: DuckSessionOptions = {}): Promise<DuckSession> {
    const session = new DuckSession(options);
    await session.#connected();
    return session;
  }

  /**
   * A session that connects on its first statement: a unit of work that finds nothing to do (an
   * update's task with nothing new) never pays for a connection (or, with `config`, an instance).
   */
  static deferred(options: DuckSessionOptions = {}): DuckSession {
    return new DuckSession(options);
  }

  #connected() {
    this.#opening ??= (async () => {
      const config = this.options.config;
      const ownsInstance = config !== undefined;
      const instance = ownsInstance ? await ownInstance(config) : await processInstance();
      let connection: DuckDBConnection;
      try {
        connection = await instance.connect();
        // UTC makes casts between TIMESTAMP and TIMESTAMPTZ independent of the host's zone. It is set
        // after connecting (the ICU extension that owns it is not loaded at create time), and only
        // for this connection.
        await connection.run("SET TimeZone = 'UTC'");
      } catch (error) {
        if (ownsInstance) instance.closeSync();
        else forgetIfInvalidated(instance, error);
        throw error;
      }
      const open = { instance, connection, ownsInstance };
      this.#open = open;
      // Closed while it was starting: nothing may use it, so it goes at once.
      if (this.#closed) this.close();
      return open;
    })();
    return this.#opening;
  }

  /**
   * A session on `instance` (one `release` handed back), closed with it unless released again. Its
   * settings are the instance's: a locked instance refuses the session's own `SET TimeZone`, so it
   * is set only when the instance's zone is not UTC already. `globalZone: "UTC"` says the caller set
   * the instance's global zone to UTC and locked it (a sandbox's lock-down): nothing is asked.
   */
  static async onInstance(
    instance: HeldInstance,
    options: DuckSessionOptions,
    globalZone?: "UTC",
  ): Promise<DuckSession> {
    const session = new DuckSession(options);
    session.#opening = (async () => {
      const connection = await instance.connect();
      try {
        if (globalZone !== "UTC") await utcConnection(connection);
      } catch (error) {
        connection.closeSync();
        instance.closeSync();
        throw error;
      }
      const open = { instance, connection, ownsInstance: true };
      session.#open = open;
      return open;
    })();
    await session.#opening;
    return session;
  }

  /**
   * Another connection to this session's instance, closed on its own: a second statement while a
   * long one runs here (the file writer reads the footers of the files a COPY has finished). It has
   * the instance's settings and lock-down, none of this connection's TEMP objects.
   */
  async sibling(): Promise<DuckSession> {
    const { instance } = await this.#connected();
    const sibling = new DuckSession(this.options);
    sibling.#opening = (async () => {
      const connection = await instance.connect();
      await utcConnection(connection);
      const open = { instance, connection, ownsInstance: false };
      sibling.#open = open;
      if (sibling.#closed) sibling.close();
      return open;
    })();
    await sibling.#opening;
    return sibling;
  }

  /** Runs statements that return nothing of interest (DDL, SET). */
  async run(sql: string, params?: DuckDBValue[]): Promise<void> {
    await this.#on((connection) => connection.run(sql, params));
  }

  /** Runs a query and returns its rows as plain JS objects. */
  async rows(sql: string, params?: DuckDBValue[]): Promise<DuckRow[]> {
    return (await this.#on((connection) => connection.runAndReadAll(sql, params))).getRowObjectsJS();
  }

  /** Runs a query and returns its rows as a user is answered them: exact decimals, maps as maps. */
  async answerRows(sql: string): Promise<AnswerRow[]> {
    const reader = await this.#on((connection) => connection.runAndReadAll(sql));
    return reader.convertRowObjects(answerValueConverter);
  }

  async #on<T>(statement: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    const open = await this.#connected();
    try {
      return await statement(open.connection);
    } catch (error) {
      this.#failed = true;
      if (!open.ownsInstance) forgetIfInvalidated(open.instance, error);
      throw error;
    }
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
    if (open.ownsInstance) open.instance.closeSync();
  }

  /**
   * Closes the connection and hands back the instance of its own, not closed, for `onInstance`: what
   * the connection made (TEMP tables and views, its settings) goes with it. Undefined, and the
   * instance closed, when a statement failed (a failure may have left the instance unsound) or the
   * session has no instance of its own.
   */
  release(): HeldInstance | undefined {
    const open = this.#open;
    if (!open || !open.ownsInstance || this.#failed) {
      this.close();
      return undefined;
    }
    this.#closed = true;
    this.#open = undefined;
    open.connection.closeSync();
    return open.instance;
  }
}

/** Sets the connection's zone to UTC unless it has it (a locked sandbox has UTC as its global zone). */
async function utcConnection(connection: DuckDBConnection): Promise<void> {
  const zone = await connection.runAndReadAll("SELECT current_setting('TimeZone') AS zone");
  if (zone.getRowObjectsJS()[0]?.["zone"] !== "UTC") await connection.run("SET TimeZone = 'UTC'");
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
