"""Reads Delta tables with delta-rs (the `deltalake` package) as the interop suite asks.

Input (argv[1], JSON): {"tables": [{"name", "uri", "storage_options", "versions", "select",
"cdf": {"from", "select"} | null, "cdf_pieces": [{"from", "to", "select"}]}]}. `select` (one for all versions, or one per version) is the SQL
that turns rows into canonical text (interop_canonical.py). Output (stdout, JSON): per table, the rows of every version, the history, the change
feed, and any error by where it happened.
"""

import json
import sys

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
from interop_canonical import canonical, connect


def read(con, spec):
    options = spec.get("storage_options") or None
    out = {"versions": {}, "history": None, "cdf": None, "errors": {}}
    for version in spec["versions"]:
        try:
            table = DeltaTable(spec["uri"], version=version, storage_options=options)
            select = spec["select"] if isinstance(spec["select"], str) else spec["select"][str(version)]
            out["versions"][str(version)] = canonical(con, table.to_pyarrow_table(), select)
        except Exception as error:  # reported to the suite, which fails on it
            out["errors"][f"version {version}"] = repr(error)
    try:
        table = DeltaTable(spec["uri"], storage_options=options)
        out["history"] = [
            {"version": h["version"], "timestamp": h["timestamp"], "operation": h.get("operation")}
            for h in table.history()
        ]
        # Point lookups on a long past 2^53: delta-rs skips files by Ebb's min/max statistics.
        out["lookups"] = {
            value: table.to_pyarrow_table(filters=[("big", "=", int(value))]).num_rows
            for value in spec.get("lookups", [])
        }
        if spec.get("cdf"):
            reader = table.load_cdf(starting_version=spec["cdf"]["from"])
            changes = pa.RecordBatchReader.from_stream(reader).read_all()
            out["cdf"] = canonical(con, changes, spec["cdf"]["select"])
    except Exception as error:
        out["errors"]["latest"] = repr(error)
    # Change feeds of earlier ranges, each read as of its end version (in that version's schema).
    out["cdf_pieces"] = []
    for piece in spec.get("cdf_pieces", []):
        try:
            table = DeltaTable(spec["uri"], version=piece["to"], storage_options=options)
            reader = table.load_cdf(starting_version=piece["from"], ending_version=piece["to"])
            changes = pa.RecordBatchReader.from_stream(reader).read_all()
            out["cdf_pieces"].append(canonical(con, changes, piece["select"]))
        except Exception as error:
            out["errors"][f"change feed {piece['from']} to {piece['to']}"] = repr(error)
    return out


def write(spec):
    """Writes a table with delta-rs: one commit per step, for Ebb to read."""
    for step in spec["steps"]:
        data = pa.Table.from_pylist(step["rows"], schema=pa.schema(
            [(name, getattr(pa, kind)()) for name, kind in spec["schema"]]))
        write_deltalake(spec["uri"], data, mode=step["mode"],
                        partition_by=spec.get("partition_by") or None,
                        configuration=spec.get("configuration") or None)


def main():
    request = json.load(open(sys.argv[1]))
    if request.get("write"):
        for spec in request["write"]:
            write(spec)
        print(json.dumps({"written": True}))
        return
    con = connect()
    print(json.dumps({spec["name"]: read(con, spec) for spec in request["tables"]}))


main()
