import { closeSync, constants, createReadStream, openSync } from "node:fs";
import { lstat, mkdir, readdir, rm } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { makePipes as makeFifos } from "./fifo-pool.ts";

/**
 * A COPY whose data files are named pipes the engine drains: DuckDB's output takes no room in the
 * temporary folder, and DuckDB waits whenever the engine has not taken its bytes (a full pipe blocks
 * its write). The bound holds by construction, however slow the uploads are; a folder of finished
 * files waiting for upload filled the disk when uploads fell behind.
 *
 * 1. The folder gets pipes `data_0.parquet` … `data_{AHEAD-1}.parquet` (DuckDB's names for a COPY
 *    with FILE_SIZE_BYTES; made ahead by `fifo-pool.ts`), each opened for reading without blocking: no thread waits for a writer.
 * 2. The COPY writes `data_0`, `data_1`, … in turn, finishing each before it starts the next; each
 *    pipe's bytes go to `take` as they come, and DuckDB waits while `take` does.
 * 3. A pipe that ends was a whole file; the pipe AHEAD further on is made.
 * 4. When the COPY has ended, each pipe DuckDB never opened is ended empty (a writer that opens and
 *    closes it), and `take` sees no bytes. A file DuckDB made where no pipe was made yet (it finished
 *    AHEAD files smaller than a pipe's buffer before the engine made the next pipe) is a plain file,
 *    taken then.
 * 5. If `take` fails, its pipe is closed (a write blocked on it fails) and DuckDB is interrupted;
 *    the other pipes are taken on, so no write or open of DuckDB's waits forever.
 */

/** Pipes made ahead of the file DuckDB writes. */
const AHEAD = 4;

export interface PipedCopy {
  /** A folder that does not exist yet; it is made, and removed afterwards. */
  readonly folder: string;
  /** Runs the COPY into `folder` (with `OVERWRITE_OR_IGNORE`: the pipes are there before it starts). */
  readonly copy: () => Promise<void>;
  /** Stops the COPY. */
  readonly interrupt: () => void;
  /** Takes one output file's bytes, in order; `order` is its number. No bytes: not a file. */
  readonly take: (order: number, bytes: AsyncIterable<Uint8Array>) => Promise<void>;
}

/** Runs the COPY with its output drained through pipes (see above); fails as the first thing that failed. */
export async function copyThroughPipes(piped: PipedCopy): Promise<void> {
  const { folder, take } = piped;
  await mkdir(folder, { recursive: true });
  const pipeOf = (order: number) => path.join(folder, `data_${order}.parquet`);
  const readers = new Map<number, net.Socket>();
  const taking = new Set<Promise<void>>();
  let copying = true;
  let failure: { readonly error: unknown } | undefined;
  let copyFailure: { readonly error: unknown } | undefined;
  const fail = (error: unknown): void => {
    if (failure) return;
    failure = { error };
    if (copying) piped.interrupt();
  };
  let next = 0;
  const makePipes = async (count: number): Promise<void> => {
    const orders = Array.from({ length: count }, (_, i) => next + i);
    next += count;
    // A name DuckDB took first (step 4) is left as it is; the others are made.
    await makeFifos(orders.map(pipeOf));
    for (const order of orders) {
      if (failure || !(await lstat(pipeOf(order)).catch(() => undefined))?.isFIFO()) continue;
      const reader = new net.Socket({
        fd: openSync(pipeOf(order), constants.O_RDONLY | constants.O_NONBLOCK),
        readable: true,
        writable: false,
      });
      readers.set(order, reader);
      const took: Promise<void> = take(order, reader)
        .then(async () => {
          readers.delete(order);
          if (copying && !failure) await makePipes(1);
        })
        .catch((error: unknown) => {
          // A write blocked on this pipe fails; the other pipes drain on, so DuckDB never waits forever.
          reader.destroy();
          fail(error);
        })
        .finally(() => taking.delete(took));
      taking.add(took);
      if (!copying) endUnwritten(pipeOf(order));
    }
  };
  try {
    await makePipes(AHEAD);
    await piped.copy().catch((error: unknown) => {
      copying = false;
      copyFailure = { error };
      fail(error);
    });
    copying = false;
    for (const order of readers.keys()) endUnwritten(pipeOf(order));
    while (taking.size > 0) await Promise.all([...taking]);
    // A COPY that failed of itself (a full disk) cut its file short, and taking that file failed
    // too, maybe first: the COPY's error is the cause, unless it only says the COPY was stopped.
    if (copyFailure && !stoppedByTake(copyFailure.error)) throw copyFailure.error;
    if (failure) throw failure.error;
    for (const order of await plainFiles(folder)) {
      await take(order, createReadStream(pipeOf(order)));
      await rm(pipeOf(order), { force: true });
    }
  } finally {
    for (const reader of readers.values()) reader.destroy();
    await rm(folder, { recursive: true, force: true });
  }
}

/** Whether the COPY's error only says that a failed `take` stopped it (interrupted, or its pipe closed). */
function stoppedByTake(error: unknown): boolean {
  return error instanceof Error && /Interrupted|Broken pipe/i.test(error.message);
}

/**
 * Ends a pipe DuckDB may never have opened: a writer that opens and closes it gives its reader an
 * end (after the bytes, if DuckDB wrote some). Opening without blocking succeeds, as a reader is open.
 */
function endUnwritten(pipe: string): void {
  try {
    closeSync(openSync(pipe, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // Its reader was closed already (it ended or failed): nothing to end.
  }
}

/** The numbers of DuckDB's plain output files in `folder`, in order (step 4). */
async function plainFiles(folder: string): Promise<number[]> {
  const orders: number[] = [];
  for (const name of await readdir(folder)) {
    const match = /^data_(\d+)\.parquet$/.exec(name);
    if (match && (await lstat(path.join(folder, name))).isFile()) orders.push(Number(match[1]));
  }
  return orders.sort((a, b) => a - b);
}
