import { tmpdir } from "node:os";
import path from "node:path";
import { DuckSession, type AnswerRow, type DuckRow } from "../duck/duck-session.ts";
import { ScratchFolder } from "../duck/scratch-folder.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import { quoteIdentifier, quoteLiteral } from "../duck/sql-text.ts";
import { conditionShapeProblem, quoteWindowKeyword, unqualify } from "../pipeline/sql-text/index.ts";
import {
  QueryError,
  QueryFailedError,
  SandboxViolationError,
  SqlLimitExceededError,
  UpdateCanceledError,
} from "./errors.ts";
import { describeTimeout, SQL_LIMIT_VARIABLES, sqlLimitsFromEnv, type SqlLimits } from "./sql-limits.ts";
import { rememberedCheck } from "./checked-queries.ts";
import { keepIdleSandbox, SPILL_FOLDER, takeIdleSandbox } from "./sandbox-pool.ts";
import { diskFailureOf, tempSpaceExhaustion } from "./temp-space.ts";

/**
 * A DuckDB instance that runs user SQL with access to nothing but its own private folder
 * (architecture.md "Compute"). It is locked before it sees any data or SQL; everything a query may
 * read (the micro-batch, dataset snapshots) is first copied into the folder by the engine (a file of
 * a local folder is hard-linked there: a name in the folder for the same bytes, never written to).
 *
 * Checked on DuckDB 1.5.6 (see test/integration/engine/sandbox.test.ts):
 * - `allowed_directories` to the folder and `enable_external_access = false`: local files elsewhere,
 *   `s3://` and `https://` URLs, `ATTACH <file>`, `COPY … TO` outside the folder, `glob` outside it,
 *   `CREATE SECRET` and `EXPORT DATABASE` fail with a Permission Error;
 * - autoinstall and autoload of extensions off: `INSTALL` and `LOAD` fail;
 * - `lock_configuration = true`: every later `SET` (re-enabling access) fails.
 * A closed sandbox's instance, locked, and its folder, emptied, go to the next sandbox of the process
 * (sandbox-pool.ts): the lock-down is the instance's and no SQL can lift it.
 * On top of that, user SQL must be exactly one SELECT (checked with DuckDB's own parser), so
 * `COPY`, `ATTACH`, `INSTALL`, `SET`, `PRAGMA` never reach execution, even into the folder.
 */

/** The settings applied, in order, before the sandbox is handed out. */
const LOCK_DOWN = (folder: string, limits: SqlLimits): string[] => [
  // Spill files stay inside the sandbox's own folder: no other sandbox can glob them. Set here, not
  // at create time, so that every sandbox with the same limits shares one configuration and can take
  // the instance created ahead for it (duck-session.ts).
  `SET temp_directory = ${quoteLiteral(path.join(folder, SPILL_FOLDER))}`,
  // After the folder: DuckDB 1.5.6 takes a `max_temp_directory_size` given at create time into its
  // settings but does not enforce it (a 40 MB limit let 578 MB spill); a SET after the folder is.
  `SET max_temp_directory_size = ${quoteLiteral(limits.tempLimit)}`,
  // Every connection of the instance in UTC (the session sets only its own): the file writer reads
  // footers on a second connection, opened after the lock.
  "SET GLOBAL TimeZone = 'UTC'",
  `SET allowed_directories = [${quoteLiteral(folder + "/")}]`,
  "SET autoinstall_known_extensions = false",
  "SET autoload_known_extensions = false",
  "SET enable_external_access = false",
  "SET lock_configuration = true",
];

export interface SandboxOptions {
  /** DuckDB worker threads. Default 2. */
  readonly threads?: number;
  /**
   * The pipeline's own namespace: user SQL may name its datasets `table`, `schema.table` or
   * `catalog.schema.table`; the qualified forms are rewritten to the bare names the engine registers
   * (with DuckDB's parser and `json_deserialize_sql`; `main` cannot be attached as a catalog).
   */
  readonly namespace?: { readonly catalog: string; readonly schema: string };
  /** What one user statement may take. @default the runtime's (`sqlLimitsFromEnv`) */
  readonly limits?: SqlLimits;
  /** Aborted when the work is stopped (the update was canceled): a running statement is interrupted. */
  readonly signal?: AbortSignal | undefined;
  /**
   * The pipeline's flow or materialized view the sandbox works for (`flow "ingest"`): errors raised
   * outside a named statement name it, and its SQL failing is `QueryFailedError` (`QUERY_FAILED`).
   */
  readonly owner?: string;
}

/** The runtime's limits, read from the environment once. */
let runtimeLimits: SqlLimits | undefined;

/** Every sandbox open in this process, so a shutdown can interrupt what they run. */
const OPEN_SANDBOXES = new Set<Sandbox>();

let shuttingDown = false;

/**
 * Interrupts every statement running in this process's sandboxes, and refuses any later one (the
 * local runtime's shutdown).
 */
export function interruptAllSandboxes(): void {
  shuttingDown = true;
  for (const sandbox of OPEN_SANDBOXES) sandbox.interrupt("shutdown");
}

export class Sandbox {
  #writerScratch: ScratchFolder | undefined;
  /** Why the running statement was interrupted, if it was. */
  #interrupted: "time" | "canceled" | "shutdown" | undefined;
  #reinterrupt: NodeJS.Timeout | undefined;
  readonly #onAbort = () => this.interrupt("canceled");

  private constructor(
    private readonly session: DuckSession,
    readonly folder: ScratchFolder,
    private readonly namespace: SandboxOptions["namespace"],
    readonly limits: SqlLimits,
    private readonly signal: AbortSignal | undefined,
    private readonly pipelineQuery: string | undefined,
    /** The instance's configuration, under which it is kept for the next sandbox (sandbox-pool.ts). */
    private readonly configuration: string,
  ) {
    OPEN_SANDBOXES.add(this);
    signal?.addEventListener("abort", this.#onAbort, { once: true });
  }

  static async open(options: SandboxOptions = {}): Promise<Sandbox> {
    const limits = options.limits ?? (runtimeLimits ??= sqlLimitsFromEnv());
    const config = { threads: String(options.threads ?? 2), memory_limit: limits.memoryLimit };
    // The temp folder too: an instance is locked to a folder in the one it was made under.
    const configuration = JSON.stringify([config, limits.tempLimit, tmpdir()]);
    const made = (session: DuckSession, folder: ScratchFolder) =>
      new Sandbox(session, folder, options.namespace, limits, options.signal, options.owner, configuration);
    // An instance locked by an earlier sandbox of this process, its folder emptied: no lock-down to
    // run, and its zone is the lock-down's UTC (no statement asks it).
    const idle = await takeIdleSandbox(configuration);
    if (idle) {
      try {
        return made(await DuckSession.onInstance(idle.instance, { config }, "UTC"), idle.folder);
      } catch (error) {
        await idle.folder.dispose();
        throw error;
      }
    }
    const folder = await ScratchFolder.create("ebb-sandbox-");
    let session: DuckSession | undefined;
    try {
      session = await DuckSession.open({ config });
      for (const statement of LOCK_DOWN(folder.dir, limits)) await session.run(statement);
      return made(session, folder);
    } catch (error) {
      session?.close();
      await folder.dispose();
      throw error;
    }
  }

  /** The private folder (absolute path, no trailing slash): the only place queries can read or write. */
  get dir(): string {
    return this.folder.dir;
  }

  /** The session, for engine code that builds relations over files in the folder (never for user SQL). */
  get duck(): DuckSession {
    return this.session;
  }

  /** Writes bytes into the folder under a fresh name; returns the absolute path. */
  async writeFile(bytes: Uint8Array, extension = ""): Promise<string> {
    try {
      return await this.folder.write(bytes, extension);
    } catch (error) {
      throw (await tempSpaceExhaustion(error, this.owner, this.dir)) ?? error;
    }
  }

  /**
   * Puts object `key` of `store` into the folder under a fresh name (ScratchFolder.take: a local
   * folder's file is linked, no bytes copied); returns the absolute path.
   */
  async takeObject(store: ObjectStore, key: string, extension = ""): Promise<string> {
    try {
      return await this.folder.take(store, key, extension);
    } catch (error) {
      throw (await tempSpaceExhaustion(error, this.owner, this.dir)) ?? error;
    }
  }

  /** A fresh absolute path in the folder for the engine to write to (e.g. a query's parquet output). */
  newPath(extension: string): Promise<string> {
    return this.folder.write(new Uint8Array(), extension);
  }

  /** Runs an engine statement (trusted SQL over files in the folder). */
  async run(sql: string): Promise<void> {
    try {
      await this.session.run(sql);
    } catch (error) {
      throw (await this.explained(error, "reading the data", this.owner)) ?? error;
    }
  }

  /** Runs an engine query and returns its rows. */
  rows(sql: string): Promise<DuckRow[]> {
    return this.reading(() => this.session.rows(sql));
  }

  /** Rows a user is answered (a query's result, state rows): exact decimals, maps as maps. */
  answerRows(sql: string): Promise<AnswerRow[]> {
    return this.reading(() => this.session.answerRows(sql));
  }

  private async reading<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      throw (await this.explained(error, "reading the data", this.owner)) ?? error;
    }
  }

  /**
   * Ebb's error for a failure that is not the SQL's own: the disk full, an interrupt, a limit, a
   * refusal by the lock-down; undefined otherwise.
   */
  private get owner(): string {
    return this.pipelineQuery ?? "the statement";
  }

  private async explained(error: unknown, what: string, owner = what): Promise<Error | undefined> {
    return (
      (await tempSpaceExhaustion(error, owner, this.dir)) ?? this.stoppedBy(error, what) ?? refusalOf(error)
    );
  }

  /**
   * Stops the user SQL running now; it fails with an error saying why. DuckDB's interrupt reaches only
   * a statement already executing, so it is repeated until the user SQL's work has ended.
   */
  interrupt(why: "time" | "canceled" | "shutdown"): void {
    this.#interrupted ??= why;
    this.session.interrupt();
    this.#reinterrupt ??= setInterval(() => this.session.interrupt(), 50);
  }

  #endInterrupt(): void {
    clearInterval(this.#reinterrupt);
    this.#reinterrupt = undefined;
    this.#interrupted = undefined;
  }

  /**
   * Runs user SQL into a temp table `into` (at most `maxRows` rows of it, when given). It must be exactly
   * one SELECT; a refusal by the lock-down becomes a `SandboxViolationError` naming what was refused, a
   * statement over its limits a `SqlLimitExceededError`, any other failure a `QueryError`.
   */
  async runUserQuery(
    sql: string,
    into: string,
    what: string,
    options: { maxRows?: number } = {},
  ): Promise<void> {
    const query = await this.parseUserQuery(sql, what);
    const capped =
      options.maxRows === undefined
        ? query
        : `SELECT * FROM (\n${query}\n) LIMIT ${Math.trunc(options.maxRows)}`;
    await this.explainingFailures(what, () =>
      this.session.run(`CREATE OR REPLACE TEMP TABLE ${quoteIdentifier(into)} AS ${capped}`),
    );
  }

  /**
   * Checks user SQL (exactly one SELECT) and returns it as a subquery to embed in engine SQL run in
   * this sandbox (e.g. by the Delta writer through `writer()`). It parsed alone as one SELECT, so it is
   * a well-formed subquery; the line breaks keep a trailing comment from swallowing the parenthesis.
   */
  async checkedQuery(sql: string, what: string): Promise<string> {
    return `SELECT * FROM (\n${await this.parseUserQuery(sql, what)}\n)`;
  }

  /**
   * Checks that user text is exactly one SQL expression (a predicate spliced into engine SQL, such as
   * the onset finder's) and returns it parenthesized: text that would close the parenthesis and add a
   * clause, a UNION or a second statement is refused before anything runs.
   */
  async checkedCondition(condition: string, what: string): Promise<string> {
    const [row] = await this.session.rows("SELECT json_serialize_sql($1::VARCHAR) AS tree", [
      `SELECT (\n${condition}\n)`,
    ]);
    const tree = JSON.parse(String(row?.["tree"])) as {
      error?: boolean;
      error_message?: string;
      statements?: unknown[];
    };
    if (tree.error) throw new QueryError(`${what} does not parse: ${tree.error_message}`);
    const problem = conditionShapeProblem(tree.statements, { subqueries: true });
    if (problem !== undefined) throw new QueryError(`${what} ${problem}`);
    return `(\n${condition}\n)`;
  }

  /**
   * The session and a scratch folder inside the sandbox's folder, for engine code (the Delta writer)
   * that runs `checkedQuery` SQL and writes files: the query's rows stream straight into data files.
   */
  async writer(): Promise<{ duck: DuckSession; scratch: ScratchFolder }> {
    this.#writerScratch ??= await ScratchFolder.createIn(this.folder.dir, "writer-");
    return { duck: this.session, scratch: this.#writerScratch };
  }

  /**
   * Runs `work` (which runs user SQL in this sandbox), turning DuckDB's failures into a
   * `SandboxViolationError` (a refusal by the lock-down) or a `QueryError` naming `what` (in a
   * pipeline's sandbox, a `QueryFailedError`). Errors of
   * Ebb's own (any subclass of Error) pass through.
   */
  async explainingFailures<T>(what: string, work: () => Promise<T>): Promise<T> {
    if (shuttingDown) this.#interrupted = "shutdown";
    else if (this.signal?.aborted) this.#interrupted = "canceled";
    const timer = setTimeout(() => this.interrupt("time"), this.limits.timeoutMs);
    try {
      if (this.#interrupted) throw new Error("INTERRUPT Error: interrupted before it started");
      return await work();
    } catch (error) {
      const explained = await this.explained(error, what);
      if (explained) throw explained;
      if (!isDuckDbError(error)) throw error;
      // A pipeline's query failing at run time names the query and keeps DuckDB's candidates.
      if (this.pipelineQuery !== undefined) throw new QueryFailedError(what, error as Error);
      throw new QueryError(`the SQL of ${what} failed: ${firstLine(error)}`, { cause: error });
    } finally {
      clearTimeout(timer);
      this.#endInterrupt();
    }
  }

  /** The error a statement stopped by an interrupt or a limit becomes, or undefined for other failures. */
  private stoppedBy(error: unknown, what: string): Error | undefined {
    const message = error instanceof Error ? error.message : String(error);
    if (/^INTERRUPT Error/.test(message) || this.#interrupted !== undefined) {
      const why = this.#interrupted;
      if (why === "time") {
        return new SqlLimitExceededError(
          "time",
          what,
          `it ran longer than ${describeTimeout(this.limits)}: make it cheaper (filter early, avoid cross joins), or raise ${SQL_LIMIT_VARIABLES.timeout} in the runtime's environment`,
          { cause: error },
        );
      }
      if (why === "canceled")
        return new UpdateCanceledError(`the update was stopped while ${what} ran`, { cause: error });
      if (why === "shutdown")
        return new UpdateCanceledError(`Ebb shut down while ${what} ran`, { cause: error });
    }
    if (/^Out of Memory Error/.test(message)) {
      // A spill refused below its limit is a full disk (`explained` takes it first).
      const temp = diskFailureOf(message) === "spill-limit" || /max_temp_directory_size/i.test(message);
      return temp
        ? new SqlLimitExceededError(
            "temp",
            what,
            `it spilled more than ${this.limits.tempLimit} to disk: make it need less (aggregate earlier, fewer columns), or raise ${SQL_LIMIT_VARIABLES.temp} in the runtime's environment`,
            { cause: error },
          )
        : new SqlLimitExceededError(
            "memory",
            what,
            `it needed more than ${this.limits.memoryLimit} of memory: make it need less (aggregate earlier, fewer columns), or raise ${SQL_LIMIT_VARIABLES.memory} in the runtime's environment`,
            { cause: error },
          );
    }
    return undefined;
  }

  /**
   * Runs user SQL straight into a parquet file in the folder, in one streaming pass (no temp table):
   * the same checks as `runUserQuery`. Returns the file and the rows written.
   */
  async exportUserQuery(sql: string, what: string): Promise<{ path: string; rows: number }> {
    const query = await this.checkedQuery(sql, what);
    const path = await this.newPath(".parquet");
    const [row] = await this.explainingFailures(what, () =>
      this.session.rows(`COPY (${query}) TO ${quoteLiteral(path)} (FORMAT parquet)`),
    );
    return { path, rows: Number(row?.["Count"] ?? 0) };
  }

  /** Writes a table of the sandbox to a parquet file in the folder; returns its path. */
  async exportParquet(table: string): Promise<string> {
    const path = await this.newPath(".parquet");
    await this.run(`COPY ${quoteIdentifier(table)} TO ${quoteLiteral(path)} (FORMAT parquet)`);
    return path;
  }

  /**
   * Ends the sandbox: its instance and folder, emptied, are kept for the next sandbox of the process
   * (sandbox-pool.ts) unless a statement failed or was stopped, or the process is shutting down;
   * otherwise the instance is closed and the folder removed.
   */
  async close(): Promise<void> {
    OPEN_SANDBOXES.delete(this);
    this.signal?.removeEventListener("abort", this.#onAbort);
    clearInterval(this.#reinterrupt);
    const stopped = shuttingDown || this.#interrupted !== undefined || this.signal?.aborted === true;
    let instance: ReturnType<DuckSession["release"]>;
    try {
      if (stopped) this.session.close();
      else instance = this.session.release();
      if (instance && (await keepIdleSandbox(this.configuration, { instance, folder: this.folder }))) return;
      instance?.closeSync();
    } catch (error) {
      instance?.closeSync();
      await this.folder.dispose();
      throw error;
    }
    await this.folder.dispose();
  }

  /**
   * Parses `sql` (never runs it), refuses anything but one SELECT, and returns it with references to
   * the pipeline's namespace made bare (the original text when there were none).
   */
  private parseUserQuery(sql: string, what: string): Promise<string> {
    return rememberedCheck(sql, this.namespace, async () => {
      const tree = await this.parseTree(sql, what);
      if (!this.namespace || !unqualify(tree, this.namespace)) return quoteWindowKeyword(sql);
      return this.deparse(tree);
    });
  }

  /**
   * The parse tree of user SQL (`json_serialize_sql`'s shape), checked as `checkedQuery` checks it and
   * with the pipeline's namespace made bare: the one statement, for engine rewrites (`deparse`).
   */
  async parsedQuery(sql: string, what: string): Promise<unknown> {
    const tree = await this.parseTree(sql, what);
    if (this.namespace) unqualify(tree, this.namespace);
    return tree.statements![0];
  }

  /** SQL text of a serialized statement tree (one statement, or the whole tree). */
  async deparse(tree: unknown): Promise<string> {
    const whole = (tree as { statements?: unknown }).statements ? tree : { error: false, statements: [tree] };
    // A node DuckDB made up (an INTERVAL's cast) has position 2^64-1, which a JS number rounds past
    // uint64: positions only place error messages, so an unknown one becomes 0.
    const text = JSON.stringify(whole, (key, value: unknown) =>
      key === "query_location" && typeof value === "number" && value > Number.MAX_SAFE_INTEGER ? 0 : value,
    );
    const [rewritten] = await this.session.rows("SELECT json_deserialize_sql($1::JSON) AS sql", [text]);
    return String(rewritten?.["sql"]);
  }

  private async parseTree(
    sql: string,
    what: string,
  ): Promise<{ error: boolean; error_type?: string; error_message?: string; statements?: unknown[] }> {
    // Spark's `window` (a windowed table's struct column, the window() function) is a keyword here.
    const [row] = await this.session.rows("SELECT json_serialize_sql($1::VARCHAR) AS tree", [
      quoteWindowKeyword(sql),
    ]);
    const tree = JSON.parse(String(row?.["tree"])) as {
      error: boolean;
      error_type?: string;
      error_message?: string;
      statements?: unknown[];
    };
    if (tree.error && tree.error_type === "not implemented") {
      const keyword = /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase() ?? "this statement";
      const article = /^[AEIOU]/.test(keyword) ? "an" : "a";
      throw new SandboxViolationError(`${article} ${keyword} statement`, "only a SELECT query may run");
    }
    if (tree.error) throw new QueryError(`the SQL of ${what} does not parse: ${tree.error_message}`);
    if ((tree.statements?.length ?? 0) !== 1) {
      throw new SandboxViolationError(
        `${tree.statements?.length ?? 0} statements`,
        "the SQL must be exactly one SELECT query",
      );
    }
    return tree;
  }
}

/** DuckDB's refusals by the lock-down, as a `SandboxViolationError` naming what was refused. */
function refusalOf(error: unknown): SandboxViolationError | undefined {
  const message = error instanceof Error ? error.message : String(error);
  const file = /Permission Error: Cannot access (?:file|directory) "([^"]*)"/.exec(message);
  if (file) return new SandboxViolationError(`access to "${file[1]}"`, firstLine(error), { cause: error });
  if (/Permission Error/.test(message))
    return new SandboxViolationError("this access", firstLine(error), { cause: error });
  const setting = /Cannot change configuration option "([^"]+)"/.exec(message);
  if (setting) {
    return new SandboxViolationError(`changing setting "${setting[1]}"`, "the configuration is locked", {
      cause: error,
    });
  }
  if (/external extensions is disabled|extension .* (?:not loaded|autoload)/i.test(message)) {
    return new SandboxViolationError("loading an extension", firstLine(error), { cause: error });
  }
  return undefined;
}

/** DuckDB reports failures as plain `Error`s whose message starts with their kind ("Binder Error: …"). */
function isDuckDbError(error: unknown): boolean {
  return (
    error instanceof Error && error.constructor === Error && /^[A-Z][A-Za-z ]* Error: /.test(error.message)
  );
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n")[0] ?? message;
}
