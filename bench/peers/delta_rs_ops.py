"""delta-rs's side of bench/peers.bench.ts, timed in this process (no interpreter start-up counted).

Two modes (`mode` in the JSON argument):
- "warm": each operation `warmup` times untimed, then `runs` times timed; prints one JSON object of
  {median, fastest} milliseconds per operation. Builds the VACUUM table first (`<vacuum>-rs`).
- "first": operation `op` once, the first call of this process (deltalake imported first, untimed);
  prints {"ms": …}. Reads the VACUUM table a "warm" run built.
"""
import json
import os
import shutil
import statistics
import sys
import time

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

args = json.loads(sys.argv[1])
log = args["log"]
cdf_from, cdf_to = args["cdfFrom"], args["cdfTo"]
files = args["vacuumFiles"]
# delta-rs does not write Ebb's tables (in-commit timestamps), so it vacuums the same shape of its
# own: the same rows, one file per partition, all removed by one DELETE.
source = f"{args['vacuum']}-rs"


def vacuum(copy):
    deleted = DeltaTable(copy).vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    if len(deleted) != files:
        raise SystemExit(f"delta-rs vacuum deleted {len(deleted)} files, expected {files}")


OPS = {
    "snapshotV10": lambda: DeltaTable(log, version=10),
    "snapshotV1000": lambda: DeltaTable(log, version=1000),
    "snapshotLatest": lambda: DeltaTable(log),
    "timeTravelRead": lambda: DeltaTable(log, version=10).to_pyarrow_table(),
    "changeFeed": lambda: DeltaTable(log).load_cdf(starting_version=cdf_from, ending_version=cdf_to).read_all(),
}


def timed_once(op, copy):
    """One call of `op` in ms; VACUUM's table copied to `copy` before the clock starts, removed after."""
    if op == "vacuum":
        shutil.copytree(source, copy)
    start = time.perf_counter()
    if op == "vacuum":
        vacuum(copy)
    else:
        OPS[op]()
    ms = (time.perf_counter() - start) * 1000
    if op == "vacuum":
        shutil.rmtree(copy)
    return ms


if args["mode"] == "first":
    print(json.dumps({"ms": timed_once(args["op"], f"{source}-first-{os.getpid()}")}))
    sys.exit(0)

if not os.path.exists(source):
    ids = list(range(files * 10))
    rows = pa.table({"id": ids, "p": [i % files for i in ids], "payload": ["x"] * len(ids)})
    write_deltalake(source, rows, partition_by=["p"])
    DeltaTable(source).delete()

out = {}
for op in [*OPS, "vacuum"]:
    for i in range(args["warmup"]):
        timed_once(op, f"{source}-warmup-{i}")
    times = [timed_once(op, f"{source}-{i}") for i in range(args["runs"])]
    out[op] = {"median": statistics.median(times), "fastest": min(times)}
print(json.dumps(out))
