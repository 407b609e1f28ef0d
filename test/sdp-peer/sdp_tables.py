"""Prints the tables `spark-pipelines run` wrote under a warehouse folder as JSON: {table: [rows]}.

SDP 4.3 without a catalog of its own keeps each table as Parquet in <warehouse>/<table>/; a streaming
table's committed files are those its file-sink log (_spark_metadata) lists.
"""
import json
import os
import sys

import pyarrow.parquet as pq


def committed_files(table_dir):
    log_dir = os.path.join(table_dir, "_spark_metadata")
    if not os.path.isdir(log_dir):
        return [os.path.join(table_dir, f) for f in os.listdir(table_dir) if f.endswith(".parquet")]
    files = []
    for name in sorted(os.listdir(log_dir), key=lambda n: int(n.split(".")[0]) if n.split(".")[0].isdigit() else -1):
        if not name.split(".")[0].isdigit():
            continue
        with open(os.path.join(log_dir, name)) as log:
            for line in log.read().splitlines()[1:]:
                entry = json.loads(line)
                if entry.get("action") == "add":
                    files.append(entry["path"].replace("file://", "").replace("file:", ""))
    return files


def main(warehouse):
    tables = {}
    for table in sorted(os.listdir(warehouse)):
        table_dir = os.path.join(warehouse, table)
        if not os.path.isdir(table_dir):
            continue
        rows = []
        for path in committed_files(table_dir):
            rows.extend(pq.read_table(path).to_pylist())
        tables[table] = rows
    json.dump(tables, sys.stdout, default=str)


if __name__ == "__main__":
    main(sys.argv[1])
