"""Ebb's Spark batch: runs one planned micro-batch of a flow on Spark and writes its manifest.

Ebb plans the batch (its input files or upstream row slices, its txn) and Ebb alone commits it; this
job only computes:

1. Read the request JSON (`--request <uri>`): the flow's SQL, its planned input, where to stage.
2. Read the planned input as the temp view `source`: the landed files (JSON, CSV, Parquet) with the
   flow's declared schema when it has one, or the upstream table's planned row slices (whole Parquet
   files, or rows [firstRow, endRow) of one by its row index) with the table's schema and partition
   values, or the planned files of its change feed (ebb_spark_change_feed.py), or a `kafka` topic's
   planned offsets per partition (ebb_spark_kafka.py).
3. Run the flow's SQL (Spark SQL) over it, through the dataset's expectations when it has any
   (ebb_spark_expectations.py: counts per expectation, `drop` rows removed, `fail` fails the batch
   before anything is written), and write the rows as Parquet under
   `<table>/<stagingPath>/run-<id>/` (a folder of this attempt alone, and in it of this job run: a
   retried batch writes beside it, and so does a job run again for the same request).
4. Read the written files back for their exact stats (numRecords, and per column nullCount,
   minValues, maxValues in Delta's per-file statistics format) and write the manifest JSON to
   `manifestUri`: files (path relative to the table root, size, stats), the rows' schema (Delta's
   schema JSON, all columns nullable), rows in and out. The manifest is written last: a job that dies
   before it leaves only unreferenced files, which VACUUM removes.

On EMR Serverless this file is the job's entry point (`spark-submit ebb_spark_batch.py --request
s3://…`). Locally the runtime starts it once with `--serve` and sends one request per line on stdin
(answers one JSON line each on the original stdout): the same code per batch, without paying a JVM
start per batch.

A failure is answered (with `--serve`) and written to `manifestUri` as `{"status": "failed"}` with its kind:
`analysis` (Spark cannot parse or resolve the SQL: the flow is not written for Spark), `input` (a
planned file is unreadable or malformed), `condition` (an expectation's condition does not apply to
the rows), `expectation` (a `fail` expectation failed; `details` names it) or `job` (anything else).
"""

import datetime
import decimal
import json
import math
import os
import sys
import time
import traceback
import uuid

from ebb_spark_cdc import reduce_events
from ebb_spark_change_feed import load_changes
from ebb_spark_expectations import ExpectationFailure, apply_expectations

MANIFEST_VERSION = 1
# Delta indexes the first 32 columns (delta.dataSkippingNumIndexedCols), as Ebb's own writer does.
INDEXED_COLUMN_LIMIT = 32
STRING_PREFIX_LENGTH = 32

DUCK_TO_SPARK_TYPES = {
    "VARCHAR": "STRING",
    "TEXT": "STRING",
    "STRING": "STRING",
    "BIGINT": "BIGINT",
    "INT8": "BIGINT",
    "LONG": "BIGINT",
    "INTEGER": "INT",
    "INT": "INT",
    "INT4": "INT",
    "SMALLINT": "SMALLINT",
    "TINYINT": "TINYINT",
    "DOUBLE": "DOUBLE",
    "FLOAT8": "DOUBLE",
    "FLOAT": "FLOAT",
    "REAL": "FLOAT",
    "BOOLEAN": "BOOLEAN",
    "BOOL": "BOOLEAN",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMP_NTZ",
    "TIMESTAMPTZ": "TIMESTAMP",
    "TIMESTAMP WITH TIME ZONE": "TIMESTAMP",
}


class BatchFailure(Exception):
    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def spark_type(declared):
    """A declared column type of an auto_loader schema, as Spark DDL (DECIMAL(p,s) passes through, a
    list `T[]` is `ARRAY<T>`). What it maps, Ebb checks before it plans a batch here
    (shared/engine/spark/spark-source-columns.ts)."""
    text = declared.strip().upper()
    if text.endswith("[]"):
        return f"ARRAY<{spark_type(text[:-2])}>"
    if text.startswith("DECIMAL") or text.startswith("NUMERIC"):
        return text.replace("NUMERIC", "DECIMAL")
    if text not in DUCK_TO_SPARK_TYPES:
        raise BatchFailure("analysis", f"column type {declared} has no Spark equivalent")
    return DUCK_TO_SPARK_TYPES[text]


def quote(name):
    return "`" + name.replace("`", "``") + "`"


def start_session(app_name):
    """The session, with what every batch needs; where it runs (master, jars, S3 endpoint) is spark-submit's."""
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.appName(app_name)
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.sql.session.timeZone", "UTC")
        # The flows' SQL is Spark 4's (and Databricks'): ANSI, as the DuckDB engine's translation runs it.
        .config("spark.sql.ansi.enabled", "true")
        # Parquet as Delta readers expect it: INT64 microsecond timestamps, no _SUCCESS marker left behind.
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        .config("spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def hadoop_fs(spark, uri):
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    return path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), path


def read_text(spark, uri):
    fs, path = hadoop_fs(spark, uri)
    stream = fs.open(path)
    try:
        reader = spark.sparkContext._jvm.java.io.BufferedReader(
            spark.sparkContext._jvm.java.io.InputStreamReader(stream, "UTF-8")
        )
        lines = []
        while True:
            line = reader.readLine()
            if line is None:
                break
            lines.append(line)
        return "\n".join(lines)
    finally:
        stream.close()


def write_text(spark, uri, text):
    fs, path = hadoop_fs(spark, uri)
    out = fs.create(path, True)
    try:
        out.write(bytearray(text.encode("utf-8")))
    finally:
        out.close()


def load_source(spark, spec, ordered=False):
    """The planned input as a DataFrame (step 2); `ordered`: a stateful flow's table slices carry their
    arrival order (ebb_spark_state.py step 1)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    if spec["kind"] == "files":
        reader = spark.read.option("mode", "FAILFAST")
        if spec.get("schema"):
            ddl = ", ".join(f"{quote(name)} {spark_type(t)}" for name, t in spec["schema"].items())
            reader = reader.schema(ddl)
        fmt = spec["format"]
        if fmt == "csv":
            reader = reader.option("header", "true")
            if not spec.get("schema"):
                reader = reader.option("inferSchema", "true")
        if not spec["uris"]:
            raise BatchFailure("input", "the batch has no input files")
        frame = reader.format(fmt).load(spec["uris"])
        # A join batch whose new rows are all the joined stream's: the files give the columns only.
        return frame.limit(0) if spec.get("columnsOnly") else frame

    if spec["kind"] == "kafka":
        import ebb_spark_kafka

        ddl = ", ".join(f"{quote(n)} {spark_type(t)}" for n, t in spec["schema"].items()) if spec.get("schema") else None
        try:
            return ebb_spark_kafka.load(spark, spec, ordered, ddl)
        except ebb_spark_kafka.KafkaReadFailure as error:
            raise BatchFailure("input", str(error)) from error

    if spec.get("changes") is not None:
        return load_changes(spark, spec, ordered)
    schema = StructType.fromJson(json.loads(spec["schemaString"]))
    partition_columns = spec.get("partitionColumns", [])
    data_schema = StructType([f for f in schema.fields if f.name not in partition_columns])
    frames = []
    for place, piece in enumerate(spec["slices"]):
        frame = spark.read.schema(data_schema).parquet(piece["uri"])
        whole = piece["firstRow"] == 0 and piece["endRow"] >= piece["fileRows"]
        if not whole:
            # Spark 3.5 exposes each Parquet row's position in its file as _metadata.row_index.
            index = F.col("_metadata.row_index")
            frame = frame.where((index >= piece["firstRow"]) & (index < piece["endRow"]))
        for name in partition_columns:
            value = piece["partitionValues"].get(name)
            field = schema[name]
            frame = frame.withColumn(name, F.lit(value).cast(field.dataType))
        order = [F.lit(place).cast("long").alias("__ebb_part"), F.col("_metadata.row_index").alias("__ebb_pos")]
        frames.append(frame.select([quote(f.name) for f in schema.fields] + (order if ordered else [])))
    if not frames:
        if ordered:
            schema = StructType.fromJson(json.loads(spec["schemaString"])).add("__ebb_part", "long").add("__ebb_pos", "long")
        return spark.createDataFrame([], schema)
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result


def nullable(data_type):
    """Ebb's tables keep every column nullable, whichever engine wrote the first batch."""
    from pyspark.sql.types import ArrayType, MapType, StructField, StructType

    if isinstance(data_type, StructType):
        return StructType([StructField(f.name, nullable(f.dataType), True, f.metadata) for f in data_type.fields])
    if isinstance(data_type, ArrayType):
        return ArrayType(nullable(data_type.elementType), True)
    if isinstance(data_type, MapType):
        return MapType(nullable(data_type.keyType), nullable(data_type.valueType), True)
    return data_type


def conform(rows, target):
    """A materialized view's rows as the DuckDB recompute types them (`outputSchema`, Ebb's DESCRIBE
    of the view: spark-view-schema.ts): each column cast to its type, by position, under DuckDB's name
    (Spark names an unnamed expression otherwise). A value the cast cannot hold fails the job (ANSI)."""
    from pyspark.sql import functions as F

    if len(rows.columns) != len(target.fields):
        raise BatchFailure(
            "analysis",
            f"the view's query gives {len(rows.columns)} columns on Spark ({', '.join(rows.columns)}) "
            f"but {len(target.fields)} on DuckDB ({', '.join(f.name for f in target.fields)})",
        )
    # By position: the query may give two columns one name.
    placed = rows.toDF(*[f"__ebb_c{i}" for i in range(len(target.fields))])
    return placed.select([F.col(f"__ebb_c{i}").cast(f.dataType).alias(f.name) for i, f in enumerate(target.fields)])


def stat_value(type_name, value, bound):
    """A min or max in Delta's stats JSON; None when the bound is better left out."""
    if value is None:
        return None
    if type_name == "string":
        if bound == "min":
            return value[:STRING_PREFIX_LENGTH]
        return value if len(value) <= STRING_PREFIX_LENGTH else None
    if type_name in ("double", "float"):
        return None if math.isnan(value) or math.isinf(value) else value
    if type_name == "timestamp" or type_name == "timestamp_ntz":
        if type_name == "timestamp" and value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        value = value.astimezone(datetime.timezone.utc) if value.tzinfo else value
        text = value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}"
        # Truncated to milliseconds: widen the maximum by the cut so it stays an upper bound.
        if bound == "max" and value.microsecond % 1000:
            widened = value + datetime.timedelta(milliseconds=1)
            text = widened.strftime("%Y-%m-%dT%H:%M:%S.") + f"{widened.microsecond // 1000:03d}"
        return text + ("Z" if type_name == "timestamp" else "")
    if type_name == "date":
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value) if value == value.to_integral_value() and abs(value) < 2**53 else None
    return value


def file_stats(spark, staged_uri, schema):
    """Exact per-file stats of the written files (step 4): one aggregate over all of them."""
    from pyspark.sql import functions as F

    frame = spark.read.schema(schema).parquet(staged_uri)
    columns = [
        f
        for f in schema.fields
        if f.dataType.typeName() not in ("struct", "array", "map", "binary", "void")
    ][:INDEXED_COLUMN_LIMIT]
    aggregates = [F.count(F.lit(1)).alias("n")]
    for i, field in enumerate(columns):
        c = F.col(quote(field.name))
        aggregates.append(F.sum(F.when(c.isNull(), 1).otherwise(0)).alias(f"nulls_{i}"))
        if field.dataType.typeName() != "boolean":
            aggregates.append(F.min(c).alias(f"min_{i}"))
            aggregates.append(F.max(c).alias(f"max_{i}"))
    rows = (
        frame.select("*", F.col("_metadata.file_path").alias("__file"), F.col("_metadata.file_size").alias("__size"))
        .groupBy("__file", "__size")
        .agg(*aggregates)
        .collect()
    )
    out = []
    for row in rows:
        stats = {"numRecords": int(row["n"]), "minValues": {}, "maxValues": {}, "nullCount": {}}
        for i, field in enumerate(columns):
            stats["nullCount"][field.name] = int(row[f"nulls_{i}"] or 0)
            if field.dataType.typeName() == "boolean":
                continue
            type_name = field.dataType.typeName()
            if type_name.startswith("decimal"):
                type_name = "decimal"
            for bound in ("min", "max"):
                value = stat_value(type_name, row[f"{bound}_{i}"], bound)
                if value is not None:
                    stats[f"{bound}Values"][field.name] = value
        out.append({"uri": row["__file"], "size": int(row["__size"]), "stats": stats})
    return out


def run_batch(spark, request):
    """Steps 2-4 of one batch; answers the manifest (also written to `manifestUri`)."""
    from pyspark.sql.types import StructType
    from pyspark.sql.utils import AnalysisException, ParseException

    started = time.time()
    spark.sparkContext.setJobGroup(f"ebb-{request['flow']}-{request['txn']['version']}", request["flow"])
    # This run's own folders in the attempt's: a job run again for the same request (the state
    # machine retries its EMR state) writes beside an earlier run's files, never into them.
    run = uuid.uuid4().hex[:12]
    staging = f"{request['output']['stagingPath'].strip('/')}/run-{run}"
    if request.get("state"):
        request = dict(request, state=dict(request["state"], stagingUri=f"{request['state']['stagingUri'].rstrip('/')}/run-{run}"))
    cdc_apply = (request.get("cdc") or {}).get("apply")
    if cdc_apply is not None:
        state = cdc_apply["state"]
        cdc_apply = dict(cdc_apply, state=dict(state, stagingUri=f"{state['stagingUri'].rstrip('/')}/run-{run}"))
        request = dict(request, cdc=dict(request["cdc"], apply=cdc_apply))
    # The datasets the SQL reads, at the versions Ebb planned (ebb_spark_reads.py); then the input.
    import ebb_spark_reads

    ebb_spark_reads.register_reads(spark, request.get("reads"))
    # A materialized view's recompute has no input: its SQL reads only `reads`.
    source = load_source(spark, request["input"], ordered=request.get("state") is not None) if request.get("input") else None
    state = None
    # A stream-stream join's second stream, numbered as `source` is (ebb_spark_join.py).
    joined = load_source(spark, request["joinedInput"], ordered=True) if request.get("joinedInput") else None
    if request.get("state"):
        import ebb_spark_state

        try:
            if request["state"].get("view"):
                # A materialized view's full recompute with its partials (ebb_spark_view.py): no source.
                import ebb_spark_view

                kept, state = None, ebb_spark_view.apply(spark, request)
            elif request["state"].get("join"):
                import ebb_spark_join

                kept, state = ebb_spark_join.apply(spark, request, source, joined)
            else:
                kept, state = ebb_spark_state.apply(spark, request, source)
        except ebb_spark_state.StateFailure as error:
            raise BatchFailure(error.kind, str(error)) from error
        if kept is not None:
            kept.createOrReplaceTempView("source")
    elif source is not None:
        source.createOrReplaceTempView("source")
    try:
        rows = spark.sql(request["sql"])
        if request.get("outputSchema"):
            rows = conform(rows, StructType.fromJson(json.loads(request["outputSchema"])))
        schema = nullable(rows.schema)
    except (AnalysisException, ParseException) as error:
        raise BatchFailure("analysis", first_line(str(error))) from error
    rows, quality, flagged = apply_expectations(rows, request.get("expectations") or [])
    if request.get("cdc") is not None:
        rows = classify_events(rows, request["cdc"])
        if request["cdc"].get("reduce") is not None:
            rows = reduce_events(rows, request["cdc"]["reduce"])
        schema = nullable(rows.schema)
    table_uri = request["output"]["tableUri"].rstrip("/")
    staged_uri = f"{table_uri}/{staging}"
    partition_columns = request["output"].get("partitionColumns") or []
    # An AUTO CDC batch the job applies itself (ebb_spark_cdc_apply.py): its MERGE's files, not its events.
    applied = None
    if cdc_apply is not None:
        import ebb_spark_cdc_apply
        import ebb_spark_state

        try:
            applied = ebb_spark_cdc_apply.apply(spark, request, rows, staging)
        except ebb_spark_state.StateFailure as error:
            raise BatchFailure(error.kind, str(error)) from error
    if applied is not None:
        schema, files, state = applied["schema"], applied["files"], applied["state"]
    else:
        writer = partitioned(rows, schema, partition_columns).write.mode("errorifexists").option("compression", "snappy")
        if partition_columns:
            writer = writer.partitionBy(*partition_columns)
        writer.parquet(staged_uri)
        data_schema = StructType([f for f in schema.fields if f.name not in partition_columns])
        files = file_stats(spark, staged_uri, data_schema)
    if flagged is not None:
        flagged.unpersist()
    rows_in = (source.count() if source is not None else 0) + (joined.count() if joined is not None else 0)
    newest = ebb_spark_kafka_newest(source) if (request.get("input") or {}).get("kind") == "kafka" else None
    manifest = {
        "version": MANIFEST_VERSION,
        "status": "succeeded",
        "flow": request["flow"],
        "txn": request["txn"],
        "schemaString": schema.json(),
        "files": [
            {
                "path": relative_path(table_uri, f["uri"]),
                "partitionValues": partition_values(relative_path(table_uri, f["uri"]), partition_columns),
                "size": f["size"],
                "stats": json.dumps(f["stats"], separators=(",", ":")),
            }
            for f in sorted(files, key=lambda f: f["uri"])
        ],
        "stagingPath": staging,
        "rowsIn": rows_in,
        "rowsOut": sum(f["stats"]["numRecords"] for f in files),
        "metrics": {"durationMs": int((time.time() - started) * 1000)},
        **({"newestRecordMs": newest} if newest is not None else {}),
        **({"dataQuality": quality} if quality is not None else {}),
        "sparkApplicationId": spark.sparkContext.applicationId,
        **({"state": state} if state is not None else {}),
        **(
            {"removes": applied["removes"], "changeData": applied["changeData"], "cdcApplied": applied["cdc"]}
            if applied is not None
            else {}
        ),
    }
    write_text(spark, request["manifestUri"], json.dumps(manifest))
    return manifest


# The staged column holding an AUTO CDC event's kind (spark-batch-contract.ts CDC_OP_COLUMN).
CDC_OP_COLUMN = "__cdc_op"


def ebb_spark_kafka_newest(source):
    import ebb_spark_kafka

    return ebb_spark_kafka.newest_ms(source)


def classify_events(rows, cdc):
    """An AUTO CDC flow's rows with each one's event kind: `apply_as_truncates` first, then
    `apply_as_deletes` (Spark SQL over the flow's rows; NULL is false), else an upsert, as
    cdc-statements.ts `batchEventsSql` classifies them. Ebb applies the staged rows by that column."""
    from pyspark.sql import functions as F
    from pyspark.sql.utils import AnalysisException, ParseException

    kind = F.lit("upsert")
    for setting, name, value in (
        ("apply_as_deletes", "deletes", "delete"),
        ("apply_as_truncates", "truncates", "truncate"),
    ):
        if cdc.get(name) is None:
            continue
        try:
            condition = F.expr(f"({cdc[name]})")
            rows.select(condition.alias("c")).schema
        except (AnalysisException, ParseException) as error:
            raise BatchFailure("analysis", f"{setting} ({cdc[name]}): {first_line(str(error))}") from error
        kind = F.when(F.coalesce(condition, F.lit(False)), F.lit(value)).otherwise(kind)
    return rows.withColumn(CDC_OP_COLUMN, kind)


def partitioned(rows, schema, partition_columns):
    """The rows with each partition column replaced by its value as Delta's `partitionValues` spell it
    (PROTOCOL.md "Partition Value Serialization", as Ebb's DuckDB writer does: data-file-writer.ts
    `serializePartitionValueSql`), so Spark's Hive-style folder names are those strings, escaped as
    Hive escapes them, and the add actions read them back from the path. NULL and '' are NULL."""
    from pyspark.sql import functions as F

    columns = []
    for field in schema.fields:
        c = F.col(quote(field.name))
        if field.name not in partition_columns:
            columns.append(c)
            continue
        kind = field.dataType.typeName()
        if kind == "date":
            text = F.date_format(c, "yyyy-MM-dd")
        elif kind == "timestamp":
            text = F.date_format(c, "yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'")
        elif kind == "timestamp_ntz":
            text = F.date_format(c, "yyyy-MM-dd HH:mm:ss.SSSSSS")
        elif kind in ("double", "float"):
            text = (
                F.when(F.isnan(c), F.lit("NaN"))
                .when(c == float("inf"), F.lit("Infinity"))
                .when(c == float("-inf"), F.lit("-Infinity"))
                .otherwise(c.cast("string"))
            )
        elif kind in ("string", "boolean", "byte", "short", "integer", "long") or kind.startswith("decimal"):
            text = c.cast("string")
        else:
            raise BatchFailure("analysis", f"a {kind} column ({field.name}) cannot be a partition column")
        columns.append(F.when(text == "", F.lit(None)).otherwise(text).alias(field.name))
    return rows.select(columns)


def partition_values(path, partition_columns):
    """A written file's partition values, from its Hive-style folders (`col=value/`, `%XX`-escaped;
    `__HIVE_DEFAULT_PARTITION__` for NULL)."""
    from urllib.parse import unquote

    found = {}
    for segment in path.split("/")[:-1]:
        name, sep, value = segment.partition("=")
        if sep and unquote(name) in partition_columns:
            found[unquote(name)] = None if value == "__HIVE_DEFAULT_PARTITION__" else unquote(value)
    return {name: found.get(name) for name in partition_columns}


def relative_path(table_uri, file_uri):
    """A written file's path relative to the table root (the `add` action's path)."""
    from urllib.parse import unquote

    scheme_less = lambda uri: unquote(uri.split(":", 1)[1].lstrip("/"))  # noqa: E731
    table, file = scheme_less(table_uri), scheme_less(file_uri)
    if not file.startswith(table + "/"):
        raise BatchFailure("job", f"Spark wrote {file_uri} outside the table folder {table_uri}")
    return file[len(table) + 1 :]


def first_line(text):
    return text.strip().split("\n")[0]


def failure_of(error):
    if isinstance(error, BatchFailure):
        return {"status": "failed", "kind": error.kind, "message": str(error)}
    if isinstance(error, ExpectationFailure):
        return {"status": "failed", "kind": error.kind, "message": str(error), "details": error.details}
    # A Py4J error's first line only names the JVM call; the Java exception's own message says why,
    # and its deepest cause why that (a write that failed names the malformed record under it).
    java = getattr(error, "java_exception", None)
    chain = ""
    if java is not None:
        root = java
        while root.getCause() is not None and root.getCause() != root:
            chain += f" {root.getMessage()}"
            root = root.getCause()
        text = f"{java.getClass().getName()}: {first_line(str(java.getMessage()))}"
        if root != java:
            text = f"{root.getClass().getName()}: {first_line(str(root.getMessage()))} (under {text})"
    else:
        text = str(error)
    kind = "input" if any(w in text + chain for w in ("FAILFAST", "Malformed", "FileNotFound")) else "job"
    return {"status": "failed", "kind": kind, "message": first_line(text)[:2000]}


def write_failure(spark, request, failure):
    """The failure as the manifest, for Ebb to name (on AWS the job's exit code alone says little)."""
    try:
        write_text(spark, request["manifestUri"], json.dumps({"version": MANIFEST_VERSION, **failure}))
    except Exception:  # noqa: BLE001 - the failure is still answered (or the job still fails)
        traceback.print_exc(file=sys.stderr)


def serve(spark, answers):
    """The local runtime's long-lived driver: one request per stdin line, one answer line each."""
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            manifest = run_batch(spark, request)
            answer = {"ok": True, "manifest": manifest}
        except Exception as error:  # noqa: BLE001 - every failure is answered, the driver lives on
            traceback.print_exc(file=sys.stderr)
            answer = {"ok": False, "failure": failure_of(error)}
            write_failure(spark, request, answer["failure"])
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


def main(argv):
    if argv[1:2] == ["--serve"]:
        # Answers go to the real stdout; the JVM inherits fd 1, so point fd 1 at stderr first.
        answers = os.fdopen(os.dup(1), "w", buffering=1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        spark = start_session("ebb-spark-engine")
        ready = {"ok": True, "ready": True, "applicationId": spark.sparkContext.applicationId}
        answers.write(json.dumps(ready) + "\n")
        answers.flush()
        serve(spark, answers)
        return 0
    if argv[1:2] != ["--request"] or len(argv) < 3:
        print("usage: ebb_spark_batch.py --request <uri> | --serve", file=sys.stderr)
        return 2
    spark = start_session("ebb-spark-batch")
    request = json.loads(read_text(spark, argv[2]))
    try:
        run_batch(spark, request)
        return 0
    except Exception as error:  # noqa: BLE001 - the failure is the manifest's, for Ebb to name
        traceback.print_exc(file=sys.stderr)
        write_failure(spark, request, failure_of(error))
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
