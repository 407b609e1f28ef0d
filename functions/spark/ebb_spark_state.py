"""The stateful operators of a Spark batch: the watermark, deduplication and windowed aggregation,
over Ebb's state layout.

The same steps as the DuckDB engine's (shared/engine/stateful/stateful-batch.ts, deduplicate.ts), on
the same files (shared/state/: a table hash-partitioned by key into buckets, each bucket a snapshot
and changelogs read in order, last row per key winning, `__ebb_deleted` rows dropped), so a state
version written by one engine is continued by the other:

1. Number the batch's rows in arrival order: (the planned file's or slice's place, the row's place in
   it), the order the DuckDB engine loads them in.
2. Watermark: drop (and count) the rows with no event time or older than the watermark the batch
   started with; advance it from the rest.
3. Deduplicate: the first row of each key in the batch; the keys' buckets of the parent version are
   read (the bucket computed as shared/state/bucket-hash.ts defines it: `fib32` or `md5-json`), and
   a key found there is dropped; the new keys are inserted (unless already expired), and within the
   watermark the parent's expired keys deleted.
4. Write one file per touched bucket under this job run's staging folder (stagingUri, the run's own) (a changelog, or a snapshot
   of the merged bucket when Ebb says it is due or when a delete may move its oldest time), then move
   each to a fresh key of the flow's state folder. Ebb writes the version's manifest from what this
   returns, and the batch's checkpoint names it when Ebb commits (spark-state.ts).
5. A windowed aggregation (window-aggregation.ts): each surviving row into every window it falls in,
   the batch's partials per window and key (the flow's compiled partial SQL), merged with the touched
   windows' stored partials; the windows the advanced watermark completes are deleted from the state
   and become `__ebb_window_final`, which the flow's compiled final SQL reads; the rest are upserted.
"""

import uuid

ROW_PART = "__ebb_part"
ROW_POS = "__ebb_pos"
BUCKET = "__ebb_bucket"
ORDER = "__ebb_order"
DELETED = "__ebb_deleted"
EVENT_TIME = "event_time"
DEDUP_TABLE = "dedup"
WINDOWS_TABLE = "windows"
# The names the DuckDB engine's windowed aggregation gives its columns (aggregate-columns.ts).
WINDOW_START = "__ebb_window_start"
WINDOW_ROWS = "__ebb_window_rows"
WINDOW_FINAL = "__ebb_window_final"
WINDOW_STRUCT = "__ebb_window"
LOW32 = 4294967295
MIX_HI = 2246822519
MIX_LO = 2654435769
# A change row reads after every stored file of its bucket (as state-store.ts orders them).
CHANGE_ORDER = 1000000

SPARK_TO_DUCK = {
    "long": "BIGINT",
    "integer": "INTEGER",
    "short": "SMALLINT",
    "byte": "TINYINT",
    "string": "VARCHAR",
    "boolean": "BOOLEAN",
    "double": "DOUBLE",
    "timestamp_ntz": "TIMESTAMP",
    "date": "DATE",
}
DUCK_TO_SPARK = {
    "BIGINT": "long",
    "INTEGER": "int",
    "SMALLINT": "short",
    "TINYINT": "byte",
    "VARCHAR": "string",
    "BOOLEAN": "boolean",
    "TIMESTAMP": "timestamp_ntz",
    "DOUBLE": "double",
    "DATE": "date",
}
INTEGERS = {"BIGINT", "INTEGER", "SMALLINT", "TINYINT"}


class StateFailure(Exception):
    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def quote(name):
    return "`" + name.replace("`", "``") + "`"


def scheme_less(uri):
    """A URI without its scheme and leading slashes: `file:/a` and `file:///a` name the same file."""
    rest = uri.split(":", 1)[1] if ":" in uri.split("/", 1)[0] else uri
    return rest.lstrip("/")


def path_key(column):
    from pyspark.sql import functions as F

    return F.regexp_replace(column, r"^[A-Za-z0-9+.-]+:/*", "")


def numbered(spark, source, input_spec):
    """Step 1: the batch's rows with their arrival order (ROW_PART, ROW_POS)."""
    from pyspark.sql import functions as F

    if input_spec["kind"] == "files":
        places = spark.createDataFrame(
            [(scheme_less(uri), i) for i, uri in enumerate(input_spec["uris"])], f"__ebb_file string, {ROW_PART} long"
        )
        frame = source.withColumn("__ebb_file", path_key(F.col("_metadata.file_path"))).withColumn(
            ROW_POS, F.monotonically_increasing_id()
        )
        frame = frame.join(F.broadcast(places), "__ebb_file", "left").drop("__ebb_file")
    else:
        frame = source
    frame = frame.localCheckpoint(eager=True)
    if frame.where(F.col(ROW_PART).isNull()).limit(1).count() > 0:
        raise StateFailure("job", "a row of the batch came from a file it did not plan")
    return frame


# Key columns whose JSON both engines spell alike (the md5-json bucket hashes the key's JSON).
KEY_TYPES = {"BIGINT", "INTEGER", "SMALLINT", "TINYINT", "VARCHAR", "BOOLEAN"}


def duck_type_of(data_type):
    """DuckDB's name of a Spark type (an array as DuckDB's list, `VARCHAR[]`), or None."""
    kind = data_type.typeName()
    if kind == "array":
        element = duck_type_of(data_type.elementType)
        return None if element is None else element + "[]"
    if kind == "struct":
        # An AUTO CDC state's events (cdc_keys: a list of structs); names quoted, as DuckDB reads them.
        fields = [(f.name, duck_type_of(f.dataType)) for f in data_type.fields]
        if any(t is None for _, t in fields):
            return None
        return "STRUCT(" + ", ".join('"' + n.replace('"', '""') + '" ' + t for n, t in fields) + ")"
    return SPARK_TO_DUCK.get(kind)


def spark_type_of(duck):
    """Spark's name of a DuckDB type of a state column (a list `X[]` as `array<x>`), or None."""
    duck = duck.strip()
    if duck.endswith("[]"):
        element = spark_type_of(duck[:-2])
        return None if element is None else f"array<{element}>"
    if duck.upper().startswith("STRUCT(") and duck.endswith(")"):
        fields = []
        for part in _top_level_split(duck[len("STRUCT(") : -1]):
            name, kind = _struct_field(part)
            spark = spark_type_of(kind)
            if spark is None:
                return None
            fields.append("`" + name.replace("`", "``") + "`:" + spark)
        return "struct<" + ",".join(fields) + ">"
    return DUCK_TO_SPARK.get(duck.upper())


def _top_level_split(text):
    """A STRUCT's fields: `text` split at the commas outside parentheses and double quotes."""
    parts, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
        elif not quoted and depth == 0 and ch == ",":
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _struct_field(text):
    """A STRUCT field `name TYPE` or `"quoted name" TYPE` as (name, type)."""
    if text.startswith('"'):
        end = 1
        while True:
            end = text.index('"', end)
            if text[end + 1 : end + 2] == '"':
                end += 2
                continue
            break
        return text[1:end].replace('""', '"'), text[end + 1 :].strip()
    name, _, kind = text.partition(" ")
    return name, kind.strip()


def duck_type(field, what="deduplication by", allowed=None):
    duck = duck_type_of(field.dataType)
    if duck is not None and duck in (allowed if allowed is not None else KEY_TYPES):
        return duck
    kind = field.dataType.simpleString()
    raise StateFailure("analysis", f"{what} a {kind} column ({field.name}) runs on DuckDB only, for now")


def spark_schema(columns):
    from pyspark.sql.types import StructField, StructType, _parse_datatype_string

    fields = []
    for c in columns:
        kind = spark_type_of(c["type"])
        if kind is None:
            raise StateFailure("job", f"state column {c['name']} {c['type']} has no Spark reader here")
        fields.append(StructField(c["name"], _parse_datatype_string(kind), True))
    return StructType(fields)


def mul32(a, b):
    """The low 32 bits of a * b (a a column below 2^32, b a constant below 2^32), with no long
    overflow: ANSI mode fails a product past 2^63. By a's 16-bit halves: each product stays below 2^48."""
    from pyspark.sql import functions as F

    high = F.shiftleft((F.shiftright(a, 16) * F.lit(b)).bitwiseAND(F.lit(0xFFFF)), 16)
    return (a.bitwiseAND(F.lit(0xFFFF)) * F.lit(b) + high).bitwiseAND(F.lit(LOW32))


def bucket_column(hash_name, key, buckets):
    """The bucket of a row (shared/state/bucket-hash.ts), as a Spark column over its key columns."""
    from pyspark.sql import functions as F

    if hash_name == "fib32":
        h = F.lit(0).cast("long")
        for c in key:
            v = F.coalesce(F.col(quote(c["name"])).cast("long"), F.lit(0).cast("long"))
            hi = F.shiftright(v, 32).bitwiseAND(F.lit(LOW32))
            lo = v.bitwiseAND(F.lit(LOW32))
            h = mul32(mul32(h.bitwiseXOR(hi), MIX_HI).bitwiseXOR(lo), MIX_LO)
        return F.shiftright(h * F.lit(buckets), 32).cast("int")
    if hash_name == "md5-json":
        options = {"ignoreNullFields": "false"}
        digest = F.md5(F.to_json(F.struct(*[json_spelled(c) for c in key]), options).cast("binary"))
        # DuckDB's md5_number reads the digest's bytes little-endian: the sum of byte i · 256^i, mod n.
        total = F.lit(0).cast("long")
        for i in range(16):
            byte = F.conv(F.substring(digest, 2 * i + 1, 2), 16, 10).cast("long")
            total = total + byte * F.lit(pow(256, i, buckets))
        return F.pmod(total, F.lit(buckets)).cast("int")
    raise StateFailure("job", f"state bucket hash {hash_name} is not one this job knows")


def json_spelled(column):
    """A key column as DuckDB's `to_json` spells its value: a TIMESTAMP (a window's start) as the text
    DuckDB casts it to, `2026-01-01 12:00:00`, `… 12:00:00.5`, `… 12:00:00.000001` (the fraction's
    trailing zeros dropped), which is Spark's cast of a timestamp to a string too; JSON quotes both."""
    from pyspark.sql import functions as F

    value = F.col(quote(column["name"]))
    if column["type"].strip().upper() == "TIMESTAMP":
        return value.cast("string").alias(column["name"])
    return value


class StateTable:
    """A state table of the parent version, as Ebb described it in the request."""

    def __init__(self, spark, name, stored, buckets, schema, time_column):
        self.spark = spark
        self.name = name
        self.stored = stored
        self.buckets = stored["buckets"] if stored else buckets
        self.schema = stored["schema"] if stored else schema
        self.hash = stored["hash"] if stored else bucket_hash_for(self.schema)
        self.time_column = time_column
        self.parts = stored["parts"] if stored else {}
        self.columns = self.schema["key"] + self.schema["value"]
        self.key_names = [c["name"] for c in self.schema["key"]]

    def bucket(self):
        return bucket_column(self.hash, self.schema["key"], self.buckets)

    def raw(self, buckets):
        """The stored rows of these buckets, with their deleted flag, read order and bucket."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import BooleanType, StructField, StructType

        places = []
        for b in sorted(set(buckets)):
            part = self.parts.get(str(b))
            if part:
                for order, uri in enumerate(part["files"]):
                    places.append((scheme_less(uri), order, b, uri))
        if not places:
            return None
        schema = StructType(spark_schema(self.columns).fields + [StructField(DELETED, BooleanType(), True)])
        frame = self.spark.read.schema(schema).parquet(*[p[3] for p in places])
        index = self.spark.createDataFrame(
            [p[:3] for p in places], f"__ebb_file string, {ORDER} int, {BUCKET} int"
        )
        return (
            frame.withColumn("__ebb_file", path_key(F.col("_metadata.file_path")))
            .join(F.broadcast(index), "__ebb_file")
            .drop("__ebb_file")
        )

    def merged(self, raw):
        """Last row per key of a raw relation, deletions dropped (state-store.ts `mergedSql`)."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        last = Window.partitionBy(*[F.col(quote(k)) for k in self.key_names]).orderBy(F.col(ORDER).desc())
        return (
            raw.withColumn("__ebb_last", F.row_number().over(last))
            .where((F.col("__ebb_last") == 1) & ~F.col(DELETED))
            .drop("__ebb_last", ORDER, DELETED)
        )


def bucket_hash_for(schema):
    return "fib32" if all(c["type"].upper() in INTEGERS for c in schema["key"]) else "md5-json"


def micros(column):
    from pyspark.sql import functions as F

    return F.unix_micros(F.col(quote(column)).cast("timestamp"))


def apply(spark, request, source):
    """Steps 1-3 and the state writes of step 4: the surviving rows, and what Ebb records."""
    from pyspark.sql import functions as F

    state = request["state"]
    rows = numbered(spark, source, request["input"])
    result = {"dropped": 0, "duplicates": 0, "watermarkMicros": None, "tables": {}}

    # 2.
    mark = state.get("watermark")
    previous = None
    if mark:
        if mark["column"] not in rows.columns:
            raise StateFailure("job", f"the watermark column {mark['column']} is not a column of the source")
        previous = mark.get("previousMicros")
        time = micros(mark["column"])
        # A row with no event time is late whatever the watermark (watermark.ts `lateSql`).
        late = time.isNull() | ((time < F.lit(int(previous))) if previous is not None else F.lit(False))
        figures = rows.agg(
            F.sum(F.when(late, 1).otherwise(0)).alias("late"),
            F.max(F.when(~late, time)).alias("newest"),
        ).collect()[0]
        result["dropped"] = int(figures["late"] or 0)
        newest = figures["newest"]
        candidate = None if newest is None else int(newest) - int(mark["delayMicros"])
        watermark = candidate if previous is None else (previous if candidate is None else max(previous, candidate))
        result["watermarkMicros"] = watermark
        rows = rows.where(~late)

    # 3.
    dedup = state.get("dedup")
    if dedup:
        rows, table_result, duplicates = deduplicate(spark, request, rows, dedup, mark, previous)
        result["duplicates"] = duplicates
        result["tables"][DEDUP_TABLE] = table_result

    # 5. A windowed aggregation: the windows the watermark completes, as WINDOW_FINAL for the flow's SQL.
    window = state.get("window")
    if window:
        rows = rows.drop(ROW_PART, ROW_POS)
        emitted, table_result = aggregate_windows(spark, request, rows, window, result["watermarkMicros"])
        result["windowsEmitted"] = emitted
        result["tables"][WINDOWS_TABLE] = table_result
        return rows, result
    return rows.drop(ROW_PART, ROW_POS), result


def deduplicate(spark, request, rows, dedup, mark, previous):
    from pyspark.sql import functions as F

    fields = {f.name: f for f in rows.schema.fields}
    for k in dedup["keys"]:
        if k not in fields:
            raise StateFailure("job", f"the drop_duplicates key {k} is not a column of the source")
    within = dedup["withinWatermark"] and mark is not None
    schema = {
        "key": [{"name": k, "type": duck_type(fields[k])} for k in dedup["keys"]],
        "value": [{"name": EVENT_TIME, "type": "TIMESTAMP"}] if within else [],
    }
    table = StateTable(
        spark, DEDUP_TABLE, dedup.get("stored"), dedup["buckets"], schema, EVENT_TIME if within else None
    )
    if table.stored and not same_schema(table.schema, schema):
        # Ebb refuses it by name (IncompatibleStateError) from the schema this answers.
        return rows.limit(0), {"schema": schema, "hash": table.hash, "buckets": table.buckets, "writes": []}, 0
    keys = [F.col(quote(k)) for k in dedup["keys"]]

    # The first row of each key in arrival order (and its event time).
    first_of = F.min(F.struct(F.col(ROW_PART), F.col(ROW_POS), *([micros(mark["column"]).alias("t")] if within else [])))
    first = rows.groupBy(*keys).agg(first_of.alias("__ebb_first"))
    first = first.select(
        *keys,
        F.col("__ebb_first").getField(ROW_PART).alias(ROW_PART),
        F.col("__ebb_first").getField(ROW_POS).alias(ROW_POS),
        *([F.col("__ebb_first").getField("t").alias("__ebb_t")] if within else []),
    ).withColumn(BUCKET, table.bucket())
    first = first.localCheckpoint(eager=True)

    # Those keys' buckets of the parent: a key found there is dropped.
    touched = [r[BUCKET] for r in first.select(BUCKET).distinct().collect()]
    seen_raw = table.raw(touched)
    if seen_raw is not None:
        seen = table.merged(seen_raw).select(*[F.col(quote(k)) for k in dedup["keys"]])
        new = first.alias("f").join(seen.alias("s"), _key_cond(dedup["keys"], "f", "s"), "left_anti")
    else:
        new = first
    new = new.localCheckpoint(eager=True)
    total = rows.count()
    kept = new.count()

    # The new keys, unless already expired; within the watermark, the parent's expired keys.
    expired_up_to = None
    if within and previous is not None:
        expired_up_to = int(previous) - int(mark["delayMicros"])
    value = (
        [F.timestamp_micros(F.col("__ebb_t")).cast("timestamp_ntz").alias(EVENT_TIME)] if within else []
    )
    fresh = new
    if expired_up_to is not None:
        fresh = fresh.where(F.col("__ebb_t") > F.lit(expired_up_to))
    changes = fresh.select(*keys, *value, F.lit(False).alias(DELETED), F.col(BUCKET))
    if expired_up_to is not None:
        bound = expired_up_to + 1
        older = [int(b) for b, part in table.parts.items() if part.get("minTime") is not None and part["minTime"] < bound]
        raw = table.raw(older)
        if raw is not None:
            gone = table.merged(raw).where(micros(EVENT_TIME) < F.lit(bound))
            changes = changes.unionByName(
                gone.select(*keys, F.lit(None).cast("timestamp_ntz").alias(EVENT_TIME), F.lit(True).alias(DELETED), F.col(BUCKET))
            )
    survivors = rows.join(new.select(ROW_PART, ROW_POS), [ROW_PART, ROW_POS], "left_semi")
    writes = write_changes(spark, request, table, changes.localCheckpoint(eager=True), dedup.get("snapshotDue", []))
    return survivors, {"schema": table.schema, "hash": table.hash, "buckets": table.buckets, "writes": writes}, total - kept


def _key_cond(keys, left, right):
    from functools import reduce

    from pyspark.sql import functions as F

    return reduce(
        lambda a, b: a & b, [F.col(f"{left}.{quote(k)}").eqNullSafe(F.col(f"{right}.{quote(k)}")) for k in keys]
    )


def same_schema(a, b):
    def same(x, y):
        return len(x) == len(y) and all(
            c["name"] == d["name"] and c["type"].upper() == d["type"].upper() for c, d in zip(x, y)
        )

    return same(a["key"], b["key"]) and same(a["value"], b["value"])


def write_changes(spark, request, table, changes, snapshot_due, upserts=False):
    """Step 4 (state-store.ts `writeTableChanges`): one file per touched bucket, and its figures.

    Deduplication inserts keys the parent does not hold and deletes keys it does (it looked them up),
    so a bucket's rows follow from the parent's without reading it, unless it is read whole: when
    Ebb says it is due a snapshot, or when a delete may have removed its oldest time. `upserts` (a
    window's partials replace the stored ones): every touched bucket is read whole for its figures."""
    from pyspark.sql import functions as F

    time = table.time_column
    aggregates = [
        F.count(F.lit(1)).alias("n"),
        F.sum(F.when(~F.col(DELETED), 1).otherwise(0)).alias("added"),
        F.sum(F.when(F.col(DELETED), 1).otherwise(0)).alias("removed"),
    ]
    if time:
        aggregates.append(F.min(F.when(~F.col(DELETED), micros(time))).alias("t"))
    figures = {r[BUCKET]: r for r in changes.groupBy(BUCKET).agg(*aggregates).collect()}
    if not figures:
        return []
    due = set(int(b) for b in snapshot_due)
    whole = sorted(
        b
        for b, f in figures.items()
        if upserts or b in due or (time is not None and f["removed"] > 0 and str(b) in table.parts)
    )
    exact = {}
    merged = None
    if whole:
        change_rows = changes.where(F.col(BUCKET).isin(whole)).withColumn(ORDER, F.lit(CHANGE_ORDER))
        stored = table.raw(whole)
        both = change_rows if stored is None else stored.unionByName(change_rows.select(*stored.columns))
        merged = table.merged(both).localCheckpoint(eager=True)
        stats = [F.count(F.lit(1)).alias("n")] + ([F.min(micros(time)).alias("t")] if time else [])
        for r in merged.groupBy(BUCKET).agg(*stats).collect():
            exact[r[BUCKET]] = (int(r["n"]), int(r["t"]) if time and r["t"] is not None else None)
        for b in whole:
            exact.setdefault(b, (0, None))

    writes, files = [], []
    for b in sorted(figures):
        f = figures[b]
        part = table.parts.get(str(b))
        kind = "snapshot" if b in due else "changelog"
        if b in exact:
            rows, min_time = exact[b]
        else:
            rows = (part["rows"] if part else 0) + int(f["added"]) - int(f["removed"])
            t = int(f["t"]) if time and f["t"] is not None else None
            stored_min = part.get("minTime") if part else None
            min_time = t if stored_min is None else (stored_min if t is None else min(stored_min, t))
        if rows == 0:
            writes.append({"bucket": b, "kind": "snapshot", "rows": 0})
        else:
            files.append({"bucket": b, "kind": kind, "rows": rows, "minTime": min_time})

    columns = [F.col(quote(c["name"])) for c in table.columns]
    sources = {
        "snapshot": (merged.select(*columns, F.lit(False).alias(DELETED), F.col(BUCKET)) if merged is not None else None),
        "changelog": changes.select(*columns, F.col(DELETED), F.col(BUCKET)),
    }
    uris = {}
    for kind in ("snapshot", "changelog"):
        buckets = [f["bucket"] for f in files if f["kind"] == kind]
        if buckets:
            uris.update(write_buckets(spark, request, kind, sources[kind], buckets, table.key_names))
    for f in files:
        key, size = uris[f["bucket"]]
        write = {"bucket": f["bucket"], "kind": f["kind"], "rows": f["rows"], "file": {"name": key, "bytes": size}}
        if f["minTime"] is not None:
            write["minTime"] = f["minTime"]
        writes.append(write)
    return writes


def write_buckets(spark, request, kind, frame, buckets, key_names):
    """One Parquet file per bucket, moved to a fresh key of the flow's state folder: (name, bytes)."""
    from pyspark.sql import functions as F

    state = request["state"]
    staging = state["stagingUri"].rstrip("/") + f"/{kind}"
    (
        frame.where(F.col(BUCKET).isin(buckets))
        .repartition(F.col(BUCKET))
        .sortWithinPartitions(BUCKET, *[F.col(quote(k)) for k in key_names])
        .write.mode("errorifexists")
        .option("compression", "snappy")
        .partitionBy(BUCKET)
        .parquet(staging)
    )
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    out = {}
    for b in buckets:
        folder = jvm.org.apache.hadoop.fs.Path(f"{staging}/{BUCKET}={b}")
        fs = folder.getFileSystem(conf)
        written = [s for s in fs.listStatus(folder) if s.getPath().getName().endswith(".parquet")]
        if len(written) != 1:
            raise StateFailure("job", f"bucket {b} of the state was written as {len(written)} files, not one")
        name = f"{str(state['seq']).zfill(10)}-{uuid.uuid4()}.parquet"
        target = jvm.org.apache.hadoop.fs.Path(state["stateUri"].rstrip("/") + "/" + name)
        if not fs.rename(written[0].getPath(), target):
            raise StateFailure("job", f"the state file of bucket {b} could not be moved to {target}")
        out[b] = (name, int(fs.getFileStatus(target).getLen()))
    return out


def group_column(j):
    return f"__ebb_g{j}"


def aggregate_column(i):
    return f"__ebb_a{i}"


def parts_of(kind, i):
    """The partial columns of aggregate i and how two partials merge (partial-aggregates.ts `partsOf`)."""
    if kind == "avg":
        return [(f"__ebb_p{i}_sum", "sum"), (f"__ebb_p{i}_count", "sum")]
    if kind.endswith("_distinct"):
        # The set of the distinct values; two sets merge into their union, sorted (`union` below).
        return [(f"__ebb_p{i}_set", "union")]
    return [(f"__ebb_p{i}_{kind}", "sum" if kind == "count" else kind)]


def merge_parts(column, how, spark_type):
    """How the partials of a key merge (partial-aggregates.ts `Part.merge`): a DISTINCT aggregate's
    sets into their union without NULL, sorted as DuckDB's `list_sort` sorts, so both engines keep
    the same list for the same set. A set of doubles spells its zero 0.0 and its NaN NaN, as DuckDB's
    merge does: `array_distinct` finds -0.0 and 0.0 two values, where DISTINCT finds one."""
    from pyspark.sql import functions as F

    if how == "union":
        values = F.flatten(F.collect_list(column))
        if spark_type in ("array<double>", "array<float>"):
            values = F.transform(
                values,
                lambda v: F.when(v == 0, F.lit(0.0).cast("double"))
                .when(F.isnan(v), F.lit(float("nan")).cast("double"))
                .otherwise(v.cast("double")),
            )
        return F.array_sort(F.array_distinct(values))
    return getattr(F, how)(column)


def distinct_final(kind, values, element):
    """A DISTINCT aggregate's value from its merged set (partial-aggregates.ts `finalOf`)."""
    from pyspark.sql import functions as F

    n = F.when(values.isNull(), F.lit(0)).otherwise(F.size(values)).cast("long")
    if kind == "count_distinct":
        return n
    integer = element in INTEGERS
    zero = F.lit(0).cast("long") if integer else F.lit(0.0).cast("double")
    total = F.aggregate(F.transform(values, lambda x: x.cast("long" if integer else "double")), zero, lambda a, x: a + x)
    if kind == "sum_distinct":
        return F.when(n > 0, total)
    return F.when(n > 0, total.cast("double") / n.cast("double"))


def aggregate_windows(spark, request, rows, window, watermark):
    """A windowed aggregation in append mode (window-aggregation.ts, steps 1-5), over the `windows`
    state table: one row per open window and key holding the partials, bucketed by md5-json."""
    from pyspark.sql import functions as F

    size, slide = int(window["sizeMicros"]), int(window["slideMicros"])
    column = window["column"]
    if column not in rows.columns:
        raise StateFailure("job", f"the window column {column} is not a column of the source")

    # 1. Each row into every window it falls in; starts are multiples of the slide since the epoch.
    count = -(-size // slide)
    t = micros(column)
    last = t - F.pmod(t, F.lit(slide))
    start = last - F.col("__ebb_k") * F.lit(slide)
    assigned = (
        rows.withColumn("__ebb_k", F.explode(F.sequence(F.lit(0).cast("long"), F.lit(count - 1).cast("long"))))
        .where(start + F.lit(size) > t)
        .withColumn(WINDOW_START, F.timestamp_micros(start).cast("timestamp_ntz"))
        .drop("__ebb_k")
    )
    assigned.createOrReplaceTempView(WINDOW_ROWS)

    # 2. The batch's partials per window and key: the flow's own SELECT, rewritten (Ebb sends it).
    from pyspark.sql.utils import AnalysisException, ParseException

    try:
        batch = spark.sql(window["partialSql"])
        batch.schema
    except (AnalysisException, ParseException) as error:
        raise StateFailure("analysis", str(error).split("\n")[0]) from error
    keys = [WINDOW_START] + [group_column(j) for j in range(int(window["groupKeys"]))]
    parts = [p for i, a in enumerate(window["aggregates"]) for p in parts_of(a["kind"], i)]
    fields = {f.name: f for f in batch.schema.fields}
    allowed = KEY_TYPES | {"TIMESTAMP"}
    scalars = {"BIGINT", "INTEGER", "SMALLINT", "TINYINT", "DOUBLE", "VARCHAR", "BOOLEAN", "TIMESTAMP", "DATE"}
    # A DISTINCT aggregate's partial is the list of its values.
    value_types = scalars | {t + "[]" for t in scalars}
    schema = {
        "key": [{"name": k, "type": duck_type(fields[k], "a window grouped by", allowed)} for k in keys],
        "value": [{"name": p, "type": duck_type(fields[p], "a window aggregating", value_types)} for p, _ in parts],
    }
    stored = window.get("stored")
    table = StateTable(spark, WINDOWS_TABLE, stored, window["buckets"], schema, WINDOW_START)
    if table.stored and not same_schema(table.schema, schema):
        # Ebb refuses it by name (IncompatibleStateError) from the schema this answers.
        return 0, {"schema": schema, "hash": table.hash, "buckets": table.buckets, "writes": []}
    batch = batch.withColumn(BUCKET, table.bucket()).localCheckpoint(eager=True)

    # 3. The touched windows' stored partials, merged with the batch's (a key's partials combine).
    touched = [r[BUCKET] for r in batch.select(BUCKET).distinct().collect()]
    key_cols = [F.col(quote(k)) for k in keys]
    raw = table.raw(touched)
    both = batch
    if raw is not None:
        seen = table.merged(raw).alias("s").join(batch.alias("b"), _key_cond(keys, "s", "b"), "left_semi")
        both = batch.unionByName(seen.select(*batch.columns))
    types = {c["name"]: spark_type_of(c["type"]) for c in table.columns}
    merged = both.groupBy(*key_cols, F.col(BUCKET)).agg(
        *[merge_parts(F.col(quote(p)), how, types[p]).cast(types[p]).alias(p) for p, how in parts]
    )
    merged = merged.localCheckpoint(eager=True)

    # 4. Complete: end <= watermark (start < watermark - size + 1); emitted once, then let go.
    start_us = micros(WINDOW_START)
    if watermark is None:
        emit = merged.limit(0)
        upserts = merged
    else:
        bound = int(watermark) - size + 1
        upserts = merged.where(start_us >= F.lit(bound))
        emit = merged.where(start_us < F.lit(bound))
        older = [int(b) for b, part in table.parts.items() if part.get("minTime") is not None and part["minTime"] < bound]
        old_raw = table.raw(older)
        if old_raw is not None:
            expired = table.merged(old_raw).where(start_us < F.lit(bound))
            expired = expired.alias("e").join(merged.alias("m"), _key_cond(keys, "e", "m"), "left_anti")
            emit = emit.unionByName(expired.select(*merged.columns))
        emit = emit.localCheckpoint(eager=True)
    columns = [F.col(quote(c["name"])) for c in table.columns]
    changes = upserts.select(*columns, F.lit(False).alias(DELETED), F.col(BUCKET)).unionByName(
        emit.select(
            *[F.col(quote(k)) for k in keys],
            *[F.lit(None).cast(types[p]).alias(p) for p, _ in parts],
            F.lit(True).alias(DELETED),
            F.col(BUCKET),
        )
    )
    writes = write_changes(
        spark, request, table, changes.localCheckpoint(eager=True), window.get("snapshotDue", []), upserts=True
    )

    # 5. The emitted windows as the flow's SQL reads them (WINDOW_STRUCT, the keys, the aggregates).
    finals = []
    for i, a in enumerate(window["aggregates"]):
        if a["kind"] == "avg":
            n = F.col(f"__ebb_p{i}_count")
            value = F.when(n != 0, F.col(f"__ebb_p{i}_sum").cast("double") / n)
        elif a["kind"].endswith("_distinct"):
            name = parts_of(a["kind"], i)[0][0]
            element = next(c["type"] for c in table.columns if c["name"] == name).strip().upper()[:-2]
            value = distinct_final(a["kind"], F.col(name), element)
        else:
            value = F.col(parts_of(a["kind"], i)[0][0])
        finals.append(value.alias(aggregate_column(i)))
    end = F.timestamp_micros(start_us + F.lit(size)).cast("timestamp_ntz")
    final = emit.select(
        F.struct(F.col(WINDOW_START).alias("start"), end.alias("end")).alias(WINDOW_STRUCT),
        *[F.col(group_column(j)) for j in range(int(window["groupKeys"]))],
        *finals,
    )
    final.createOrReplaceTempView(WINDOW_FINAL)
    return emit.count(), {"schema": table.schema, "hash": table.hash, "buckets": table.buckets, "writes": writes}

