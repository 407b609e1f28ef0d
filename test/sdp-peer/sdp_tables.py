"""Prints the tables `spark-pipelines run` wrote under a warehouse folder as JSON: {table: [rows]}.

SDP 4.3 without Delta keeps each table as Parquet in <warehouse>/<table>/.
"""
import json
import os
import sys

import pyarrow.parquet as pq


def data_files(table_dir):
    # Every Parquet file of the table. Not the file sink's log (_spark_metadata): several flows into
    # one table are several queries sharing that log without Delta's commits, so each batch's entry
    # of one flow overwrites the other's, while both flows' files are there.
    return sorted(
        os.path.join(table_dir, f) for f in os.listdir(table_dir) if f.endswith(".parquet")
    )


def main(warehouse):
    tables = {}
    for table in sorted(os.listdir(warehouse)):
        table_dir = os.path.join(warehouse, table)
        if not os.path.isdir(table_dir):
            continue
        rows = []
        for path in data_files(table_dir):
            rows.extend(pq.read_table(path).to_pylist())
        tables[table] = rows
    json.dump(tables, sys.stdout, default=str)


if __name__ == "__main__":
    main(sys.argv[1])
