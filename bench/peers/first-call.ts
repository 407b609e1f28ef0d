import { performance } from "node:perf_hooks";
import { DuckSession } from "../../shared/duck/duck-session.ts";
import { copyTree } from "./copy-tree.ts";
import { ebbOp, type PeerOp, type PeerTables } from "./ebb-ops.ts";

/**
 * `tsx bench/peers/first-call.ts '<json>'`: the time of one Ebb call of an operation in a fresh process
 * (modules loaded and a DuckDB session open first, untimed): what a CLI call or a Lambda's cold
 * start pays, V8 compiling the code as it first runs. Prints `{"ms": …}`. The JSON holds the op,
 * the `PeerTables` and, for VACUUM, `vacuumSource` (copied to `vacuumCopy` before the clock starts).
 */
const args = JSON.parse(process.argv[2] ?? "{}") as PeerTables & {
  op: PeerOp;
  vacuumSource: string;
  vacuumCopy: string;
};
const duck = await DuckSession.open();
try {
  if (args.op === "vacuum") await copyTree(args.vacuumSource, args.vacuumCopy);
  const start = performance.now();
  await ebbOp(args.op, args, duck, args.vacuumCopy);
  console.log(JSON.stringify({ ms: performance.now() - start }));
} finally {
  duck.close();
}
