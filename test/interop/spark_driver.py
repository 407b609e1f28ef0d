"""A long-lived Spark (with Delta Lake) driver the interop suite talks to: one JVM for the whole suite.

Started by spark-driver.ts with the Delta jars' paths in argv[1:]. Reads one JSON request per line
on stdin and answers each with one JSON line on the original stdout ({"ok": true, "result": ...} or
{"ok": false, "error": ...}); everything else, Spark's and the JVM's output included, goes to stderr.

Requests:
- {"op": "read", "tables": [{"name", "uri", "versions", "select", "cdf": {"from", "select"} | null,
  "history": false (optional)}]}:
  per table, the rows of every version (time travel), DESCRIBE HISTORY unless not asked, the change feed read both as
  readChangeFeed and as table_changes, and any error by where it happened. `select` (one SQL for all
  versions, or one per version) turns rows into canonical text (interop_canonical.py).
- {"op": "sql", "statements": [...]}: runs Spark SQL statements in order (the suite's Spark writers).
- {"op": "stream", "uri", "checkpoint", "sink", "select"}: one availableNow run of a structured
  stream from the Delta table `uri` into the Delta table `sink`; answers the sink's rows.
- {"op": "eval", "batches": [{"expressions": [...], "from": "…"}]}: per expression, `SELECT <expression>
  FROM …`'s values as plain JSON (spark_values.py), or the error it raised (the SQL dialect's
  conformance corpus). A batch's expressions run as the columns of one query; a batch that fails
  is split in halves until each error belongs to one expression.
- {"op": "hadoop_conf", "conf": {...}}: sets Hadoop options of the session (s3a's endpoint and keys).
- {"op": "dedup_within_watermark", "name", "path", "schema", "event_time", "delay", "keys", "checkpoint",
  "select"}: one availableNow run of a structured stream over the JSON files under `path`, one file
  per micro-batch (oldest first), `event_time` cast to TIMESTAMP, withWatermark(event_time, delay)
  and dropDuplicatesWithinWatermark(keys), into a memory sink; answers `select`'s columns of the
  kept rows.
"""

import json
import os
import sys
import traceback

# Answers go to the real stdout; the JVM inherits fd 1, so point fd 1 at stderr before it starts.
answers = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql.functions import col  # noqa: E402
from delta.tables import DeltaTable  # noqa: E402
from interop_canonical import canonical, connect  # noqa: E402
from spark_values import plain  # noqa: E402


def start(jars):
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("ebb-interop")
        .config("spark.jars", ",".join(jars))
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "1g")
        # A short-lived JVM of small jobs: the quick compiler alone, and one GC thread.
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        # Small tables: one task rebuilds a snapshot instead of fifty.
        .config("spark.databricks.delta.snapshotPartitions", "1")
        .config("spark.databricks.delta.retentionDurationCheck.enabled", "false")
        .config("spark.sql.warehouse.dir", os.environ.get("EBB_SPARK_WAREHOUSE", "spark-warehouse"))
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def quoted(uri):
    return "delta.`" + uri.replace("`", "``") + "`"


def select_for(spec, version):
    select = spec["select"]
    return select if isinstance(select, str) else select[str(version)]


def read(spark, con, spec):
    uri = spec["uri"]
    out = {"versions": {}, "history": None, "cdf": None, "table_changes": None, "errors": {}}
    for version in spec["versions"]:
        try:
            frame = spark.read.format("delta").option("versionAsOf", version).load(uri)
            out["versions"][str(version)] = canonical(con, frame.toArrow(), select_for(spec, version))
        except Exception as error:  # reported to the suite, which fails on it
            out["errors"][f"version {version}"] = short(error)
    try:
        if spec.get("history", True):
            history = DeltaTable.forPath(spark, uri).history().selectExpr(
                "version", "unix_millis(timestamp) AS timestamp", "operation"
            )
            out["history"] = [row.asDict() for row in history.orderBy("version", ascending=False).collect()]
    except Exception as error:
        out["errors"]["history"] = short(error)
    cdf = spec.get("cdf")
    if cdf:
        try:
            frame = (
                spark.read.format("delta")
                .option("readChangeFeed", "true")
                .option("startingVersion", cdf["from"])
                .load(uri)
            )
            out["cdf"] = canonical(con, frame.toArrow(), cdf["select"])
        except Exception as error:
            out["errors"]["readChangeFeed"] = short(error)
        try:
            frame = spark.sql(f"SELECT * FROM table_changes('{quoted(uri)}', {int(cdf['from'])})")
            out["table_changes"] = canonical(con, frame.toArrow(), cdf["select"])
        except Exception as error:
            out["errors"]["table_changes"] = short(error)
    return out


def stream(spark, con, request):
    query = (
        spark.readStream.format("delta")
        .options(**request.get("options", {}))
        .load(request["uri"])
        .writeStream.format("delta")
        .option("checkpointLocation", request["checkpoint"])
        .trigger(availableNow=True)
        .start(request["sink"])
    )
    query.awaitTermination()
    if query.exception() is not None:
        raise RuntimeError(str(query.exception()))
    frame = spark.read.format("delta").load(request["sink"])
    return canonical(con, frame.toArrow(), request["select"])


def dedup_within_watermark(spark, request):
    name = request["name"]
    time = request["event_time"]
    frame = (
        spark.readStream.schema(request["schema"])
        .option("maxFilesPerTrigger", 1)
        .json(request["path"])
        .withColumn(time, col(time).cast("timestamp"))
        .withWatermark(time, request["delay"])
        .dropDuplicatesWithinWatermark(request["keys"])
    )
    query = (
        frame.writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", request["checkpoint"])
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    if query.exception() is not None:
        raise RuntimeError(str(query.exception()))
    rows = spark.table(name).select(*request["select"]).collect()
    return [list(row) for row in rows]


def evaluate(spark, expressions, source):
    columns = ", ".join(f"{expression} AS c{i}" for i, expression in enumerate(expressions))
    try:
        rows = spark.sql(f"SELECT {columns}{source}").collect()
    except Exception as error:
        if len(expressions) == 1:
            return [{"error": short(error)}]
        half = len(expressions) // 2
        return evaluate(spark, expressions[:half], source) + evaluate(spark, expressions[half:], source)
    return [{"rows": [[plain(row[i])] for row in rows]} for i in range(len(expressions))]


def short(error):
    """The first line of a Spark error: its class and message, without the JVM stack."""
    # py4j's own message only names the call; the Java exception names what went wrong.
    cause = getattr(error, "java_exception", None)
    text = (str(cause) if cause is not None else str(error)).strip() or repr(error)
    return text.splitlines()[0][:2000]


def answer(request, spark, con):
    op = request.get("op")
    if op == "read":
        return {spec["name"]: read(spark, con, spec) for spec in request["tables"]}
    if op == "sql":
        for statement in request["statements"]:
            spark.sql(statement).collect()
        return None
    if op == "stream":
        return stream(spark, con, request)
    if op == "dedup_within_watermark":
        return dedup_within_watermark(spark, request)
    if op == "eval":
        return [answer for batch in request["batches"] for answer in evaluate(spark, batch["expressions"], batch["from"])]
    if op == "hadoop_conf":
        conf = spark.sparkContext._jsc.hadoopConfiguration()
        for key, value in request["conf"].items():
            conf.set(key, value)
        return None
    raise ValueError(f"unknown op {op!r}")


def main():
    spark = start(sys.argv[1:])
    con = connect()
    answers.write(json.dumps({"ok": True, "result": {"spark": spark.version}}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            result = answer(json.loads(line), spark, con)
            reply = {"ok": True, "result": result}
        except Exception as error:
            traceback.print_exc()
            reply = {"ok": False, "error": short(error)}
        answers.write(json.dumps(reply) + "\n")
    spark.stop()


main()
