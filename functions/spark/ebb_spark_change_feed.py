"""A change feed batch's rows: the files Ebb planned, read as the DuckDB engine reads them.

Ebb plans the versions a reader of a table's change data feed takes (their live lineage: a version a
RESTORE abandoned is skipped) and lists the files holding their change rows
(delta/read/change-data-feed.ts `planCommitChanges`): a commit's `cdc` files when it has any, else its
added files as inserts and its removed files as deletes. The rows are read here exactly as
`changeRelationSql` reads them: the table's columns (its schema at the planned snapshot; a column a
file lacks is NULL, a partition column is the file's value), then `_change_type` (a `cdc` file's own
column, or the file's fixed type), `_commit_version` and `_commit_timestamp` (the commit's time as Ebb
dates it, in milliseconds). Delta's own `readChangeFeed` is not used: it would read every version of
the range, abandoned ones too, date each commit by its own rule and refuse a table without the feed
turned on, where Ebb reads its adds and removes.

Rows come in the DuckDB engine's order: the data files' rows first, then the `cdc` files', each file's
in its order (a stateful flow numbers them so).
"""

import json

CHANGE_TYPE = "_change_type"
COMMIT_VERSION = "_commit_version"
COMMIT_TIMESTAMP = "_commit_timestamp"


def quote(name):
    return "`" + name.replace("`", "``") + "`"


def load_changes(spark, spec, ordered):
    """The change rows of `spec["changes"]` as one DataFrame (with `__ebb_part`/`__ebb_pos` when `ordered`)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StringType, StructType, TimestampType

    schema = StructType.fromJson(json.loads(spec["schemaString"]))
    partition_columns = spec.get("partitionColumns", [])
    data_schema = StructType([f for f in schema.fields if f.name not in partition_columns])
    columns = [f.name for f in schema.fields] + [CHANGE_TYPE, COMMIT_VERSION, COMMIT_TIMESTAMP]
    files = spec["changes"]
    in_order = [f for f in files if f["changeType"] is not None] + [f for f in files if f["changeType"] is None]
    frames = []
    for place, change in enumerate(in_order):
        fixed = change["changeType"]
        read_schema = data_schema if fixed is not None else StructType(data_schema.fields).add(CHANGE_TYPE, StringType())
        frame = spark.read.schema(read_schema).parquet(change["uri"])
        for name in partition_columns:
            frame = frame.withColumn(name, F.lit(change["partitionValues"].get(name)).cast(schema[name].dataType))
        if fixed is not None:
            frame = frame.withColumn(CHANGE_TYPE, F.lit(fixed))
        frame = frame.withColumn(COMMIT_VERSION, F.lit(change["version"]).cast(LongType()))
        frame = frame.withColumn(COMMIT_TIMESTAMP, F.timestamp_millis(F.lit(change["timestampMs"]).cast(LongType())))
        order = [F.lit(place).cast("long").alias("__ebb_part"), F.col("_metadata.row_index").alias("__ebb_pos")]
        frames.append(frame.select([quote(c) for c in columns] + (order if ordered else [])))
    if not frames:
        empty = StructType(schema.fields).add(CHANGE_TYPE, StringType()).add(COMMIT_VERSION, LongType()).add(COMMIT_TIMESTAMP, TimestampType())
        if ordered:
            empty = empty.add("__ebb_part", "long").add("__ebb_pos", "long")
        return spark.createDataFrame([], empty)
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result
