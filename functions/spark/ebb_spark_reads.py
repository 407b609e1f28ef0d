"""The other datasets a batch's SQL reads (a stream-static join, a materialized view's inputs),
registered as temp views under their names before the SQL runs.

Ebb plans the version of each table read (engine/spark/spark-snapshot-reads.ts) and sends its live
data files: they are read here as snapshot-views.ts reads them in DuckDB, with the table's schema at
that version (a column a file lacks is NULL, a partition column is the file's value). Delta's own
reader (`versionAsOf`) is not used: it would resolve the version itself, and reach versions a RESTORE
abandoned. A view read is its SQL, registered after what it reads (the request's order).
"""

import json


def quote(name):
    return "`" + name.replace("`", "``") + "`"


def register_reads(spark, reads):
    """Registers each of `reads` (the request's `reads`) as a temp view."""
    for read in reads or []:
        if read["kind"] == "view":
            spark.sql(read["sql"]).createOrReplaceTempView(read["name"])
        else:
            table_frame(spark, read).createOrReplaceTempView(read["name"])


def table_frame(spark, read):
    """The rows of a table read's planned files, with the table's columns in its order."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    schema = StructType.fromJson(json.loads(read["schemaString"]))
    partition_columns = read.get("partitionColumns") or []
    data_schema = StructType([f for f in schema.fields if f.name not in partition_columns])
    columns = [quote(f.name) for f in schema.fields]
    if not read["files"]:
        return spark.createDataFrame([], schema)
    if not partition_columns:
        return spark.read.schema(data_schema).parquet(*[f["uri"] for f in read["files"]]).select(columns)
    frames = []
    for file in read["files"]:
        frame = spark.read.schema(data_schema).parquet(file["uri"])
        for name in partition_columns:
            frame = frame.withColumn(name, F.lit(file["partitionValues"].get(name)).cast(schema[name].dataType))
        frames.append(frame.select(columns))
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result
