"""delta-rs's side of bench/peers.bench.ts: times each table operation in this process (no
interpreter start-up counted) and prints one JSON object of {median, fastest} milliseconds per operation."""
import json
import shutil
import statistics
import sys
import time

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

args = json.loads(sys.argv[1])
runs = args["runs"]


def timed(work):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return summary(times)


def summary(times):
    return {"median": statistics.median(times), "fastest": min(times)}


log = args["log"]
cdf_from, cdf_to = args["cdfFrom"], args["cdfTo"]
out = {
    "snapshotV10": timed(lambda: DeltaTable(log, version=10)),
    "snapshotV1000": timed(lambda: DeltaTable(log, version=1000)),
    "snapshotLatest": timed(lambda: DeltaTable(log)),
    "timeTravelRead": timed(lambda: DeltaTable(log, version=10).to_pyarrow_table()),
    "changeFeed": timed(
        lambda: DeltaTable(log).load_cdf(starting_version=cdf_from, ending_version=cdf_to).read_all()
    ),
}

# delta-rs does not write Ebb's tables (in-commit timestamps), so it vacuums the same shape of its
# own: the same rows, one file per partition, all removed by one DELETE.
files = args["vacuumFiles"]
source = f"{args['vacuum']}-rs"
ids = list(range(files * 10))
rows = pa.table({"id": ids, "p": [i % files for i in ids], "payload": ["x"] * len(ids)})
write_deltalake(source, rows, partition_by=["p"])
DeltaTable(source).delete()

vacuum_times = []
for i in range(runs):
    copy = f"{source}-{i}"
    shutil.copytree(source, copy)
    start = time.perf_counter()
    deleted = DeltaTable(copy).vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    vacuum_times.append((time.perf_counter() - start) * 1000)
    if len(deleted) != args["vacuumFiles"]:
        raise SystemExit(f"delta-rs vacuum deleted {len(deleted)} files, expected {args['vacuumFiles']}")
    shutil.rmtree(copy)
out["vacuum"] = summary(vacuum_times)
print(json.dumps(out))
