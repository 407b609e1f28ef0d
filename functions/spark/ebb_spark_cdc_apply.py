"""An AUTO CDC batch's apply in the job (SCD type 1 and 2): the MERGE by key that Ebb's function runs in
DuckDB otherwise (shared/engine/auto-cdc/apply-changes.ts, cdc-statements.ts), over the same
per-key state (`cdc_keys`, read and written with Ebb's bucket layout: ebb_spark_state.py), so a
batch applied here and the next applied there continue one another.

1. The staged events (classified and reduced: ebb_spark_cdc.py) get their sequence, kind, tie hash
   (DuckDB's `md5(to_json(struct_pack(keys, values)))`) and apply time.
2. The truncate sequence moves up to the batch's highest truncate; the state rows of the touched
   keys are read (every row when the truncate moved: it reaches every key).
3. Before and after: each key's row (SCD type 1) or versions (type 2, `__START_AT`/`__END_AT`) from
   the state's events, and from those merged with the batch's by the tie rule (a delete first, then
   the higher tie hash, then the earlier apply time), by the rules of ebb_spark_cdc_rules.py; what
   changed is the MERGE source (new or changed rows, and a delete mark for each row that is gone),
   matched on the keys (type 1) or the keys and `__START_AT` (type 2).
4. The target's files holding a matched row are rewritten (the rows they keep, the updated and the
   inserted ones), the change feed's rows written when the table has it on, and the next state's
   buckets written; the manifest names the files added and removed, the change-data files and the
   state writes. Ebb commits them with the batch's txn.

`plan` answers why a batch cannot be applied here (Ebb applies the staged events then, as before):
a sequence of several columns or not an integer, a key or value type whose tie hash the engines
spell differently, a target of other columns, partitioned or with deletion vectors, an event
without a key or sequence (the apply's error names them). Ebb itself keeps a state adopting its
table after a checkpoint reset (SCD type 2) and a target several flows write (spark-cdc-apply.ts).
"""

import json

import ebb_spark_state as st
from ebb_spark_cdc import CDC_OP_COLUMN, hashed_columns, quote, tie_hash
from ebb_spark_cdc_rules import END_AT, START_AT, scd1_retained, scd1_rows, scd2_versions

SEQ = "__cdc_seq"
OP = CDC_OP_COLUMN
TIE = "__cdc_tie"
AT = "__cdc_at"
EVENTS = "__cdc_events"
DELETE_MARK = "__cdc_delete"
CDC_TABLE = "cdc_keys"
CHANGE_TYPE = "_change_type"
INTEGER_SEQUENCES = {"long", "integer", "short", "byte"}


def resolved_layout(rows, request):
    """The request's layout with its written columns (`values`) and SCD type 2's tracked ones,
    resolved from the flow's output as cdc-layout.ts resolves them (the keys, then `column_list` or
    every column, less `except_column_list`; of those, `track_history_column_list`, or all less
    `track_history_except_column_list`)."""
    spec = request["cdc"]["apply"]
    reduce = request["cdc"]["reduce"]
    output = [f.name for f in rows.schema.fields if f.name != CDC_OP_COLUMN]
    keys = list(spec["layout"]["keys"])
    written = hashed_columns(output, reduce, reduce.get("ties") or {})
    values = [c for c in written if c not in keys]
    listed = spec["layout"].get("trackHistoryColumnList")
    unlisted = spec["layout"].get("trackHistoryExceptColumnList") or []
    tracked = [v for v in values if v in listed] if listed is not None else [v for v in values if v not in unlisted]
    return output, dict(spec["layout"], values=values, tracked=tracked)


def target_columns(layout):
    """The target's columns: the keys, the values, and SCD type 2's validity."""
    validity = [START_AT, END_AT] if layout["scdType"] == 2 else []
    return layout["keys"] + layout["values"] + validity


def identity_columns(layout):
    """The columns a MERGE matches a target row on (cdc-statements.ts `identityColumns`)."""
    return layout["keys"] + ([START_AT] if layout["scdType"] == 2 else [])


def refusal(rows, spec, layout):
    """Why the job leaves this batch's apply to Ebb, or None."""
    from pyspark.sql import functions as F

    keys, values, sequence = layout["keys"], layout["values"], layout["sequence"]
    fields = {f.name: f for f in rows.schema.fields}
    if len(sequence) != 1 or fields.get(sequence[0]) is None:
        return "a sequence of several columns"
    if fields[sequence[0]].dataType.typeName() not in INTEGER_SEQUENCES:
        return "a sequence that is not an integer"
    if any(c not in fields or fields[c].dataType.typeName() not in spec["tieTypes"] for c in keys + values):
        return "a column whose tie hash the engines spell differently"
    if any(st.duck_type_of(fields[k].dataType) not in st.KEY_TYPES for k in keys):
        return "a key of a type the state's bucket hash is not shared for"
    target = spec["target"]
    if target["partitioned"] or target["deletionVectors"]:
        return "a partitioned target or one with deletion vectors"
    if target["columns"] is not None and target["columns"] != target_columns(layout):
        return "a target of other columns"
    invalid = F.col(quote(sequence[0])).isNull()
    for k in keys:
        invalid = invalid | ((F.col(quote(OP)) != F.lit("truncate")) & F.col(quote(k)).isNull())
    if rows.where(invalid).limit(1).count() > 0:
        return "events without a key or sequence"
    return None


def apply(spark, request, rows, staging):
    """Steps 1-4; answers the manifest's parts, or None when Ebb applies the batch (`refusal`)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, StructField, StructType

    spec = request["cdc"]["apply"]
    rows = rows.localCheckpoint(eager=True)
    output, layout = resolved_layout(rows, request)
    if refusal(rows, spec, layout) is not None:
        return None
    keys, values = layout["keys"], layout["values"]
    key_cols = [F.col(quote(k)) for k in keys]
    fields = {f.name: f for f in rows.schema.fields}

    # 1.
    at = F.timestamp_micros(F.lit(int(spec["nowMicros"]))).cast("timestamp_ntz")
    batch = rows.select(
        *key_cols,
        *[F.col(quote(v)) for v in values],
        F.col(quote(layout["sequence"][0])).alias(SEQ),
        F.col(quote(OP)),
        tie_hash([fields[c] for c in keys + values]).alias(TIE),
        at.alias(AT),
    )
    event_fields = [batch.schema[c] for c in [SEQ, OP, TIE, *values, AT]]
    changes = batch.where(F.col(OP) != F.lit("truncate")).localCheckpoint(eager=True)

    # 2.
    before = None if spec.get("truncate") is None else int(json.loads(spec["truncate"]))
    newest = batch.where(F.col(OP) == F.lit("truncate")).agg(F.max(SEQ)).collect()[0][0]
    moved = int(newest) if newest is not None and (before is None or int(newest) > before) else None
    after = moved if moved is not None else before
    events_type = ArrayType(StructType([StructField(f.name, f.dataType, True) for f in event_fields]), True)
    schema = {
        "key": [{"name": k, "type": st.duck_type_of(fields[k].dataType)} for k in keys],
        "value": [{"name": EVENTS, "type": st.duck_type_of(events_type)}],
    }
    state = spec["state"]
    table = st.StateTable(spark, CDC_TABLE, state["stored"], state["buckets"], schema, None)
    if table.stored and st.spark_schema(table.columns) != st.spark_schema(schema["key"] + schema["value"]):
        return None
    touched_keys = changes.select(*key_cols).distinct()
    if moved is None:
        buckets = [r[0] for r in touched_keys.select(table.bucket().alias(st.BUCKET)).distinct().collect()]
    else:
        buckets = [int(b) for b in table.parts]
    raw = table.raw(buckets)
    prior = None
    if raw is not None:
        prior = table.merged(raw).select(*key_cols, F.col(EVENTS))
        if moved is None:
            prior = prior.join(touched_keys, keys, "left_semi")
        prior = prior.localCheckpoint(eager=True)

    # 3.
    own = (
        changes.limit(0)
        if prior is None
        else prior.select(*key_cols, F.explode(EVENTS).alias("__e")).select(
            *key_cols, *[F.col(f"__e.{quote(f.name)}").alias(f.name) for f in event_fields]
        )
    )
    tie_order = Window.partitionBy(*key_cols, F.col(SEQ)).orderBy(
        (F.col(OP) == F.lit("delete")).desc(), F.col(TIE).desc(), F.col(AT).asc()
    )
    every = (
        own.unionByName(changes)
        .withColumn("__r", F.row_number().over(tie_order))
        .where(F.col("__r") == 1)
        .drop("__r")
        .localCheckpoint(eager=True)
    )
    touched = (touched_keys if prior is None else prior.select(*key_cols).union(touched_keys)).distinct()
    if layout["scdType"] == 1:
        rows_before = scd1_rows(own, keys, values, layout["ignoreNullUpdates"], before)
        rows_after = scd1_rows(every, keys, values, layout["ignoreNullUpdates"], after)
    else:
        # Truncates are SCD type 1's only (auto-cdc-schema.ts): none reaches here.
        rows_before = scd2_versions(own, keys, values, layout["tracked"], layout["ignoreNullUpdates"])
        rows_after = scd2_versions(every, keys, values, layout["tracked"], layout["ignoreNullUpdates"])
    rows_after = rows_after.localCheckpoint(eager=True)
    identity = identity_columns(layout)
    identity_cols = [F.col(quote(c)) for c in identity]
    gone = (touched if layout["scdType"] == 1 else rows_before.select(*identity_cols)).subtract(
        rows_after.select(*identity_cols)
    )
    blanks = [F.lit(None).cast(f.dataType).alias(f.name) for f in rows_after.schema.fields if f.name not in identity]
    source = (
        rows_after.subtract(rows_before)
        .withColumn(DELETE_MARK, F.lit(False))
        .unionByName(gone.select(*identity_cols, *blanks).withColumn(DELETE_MARK, F.lit(True)))
        .localCheckpoint(eager=True)
    )

    # 4. The target's rewrite and change feed, then the state.
    merged = merge_target(spark, request, spec, source, identity, target_columns(layout), staging)
    # SCD type 2 keeps every event: each may be a version's bound.
    retained = (
        scd1_retained(every, keys, layout["ignoreNullUpdates"], after, int(spec["expiredBeforeMicros"]))
        if layout["scdType"] == 1
        else every
    )
    upserts = retained.groupBy(*key_cols).agg(
        F.sort_array(F.collect_list(F.struct(*[F.col(quote(f.name)) for f in event_fields]))).alias(EVENTS)
    )
    deletes = touched.join(upserts.select(*key_cols), keys, "left_anti")
    state_changes = (
        upserts.withColumn(st.DELETED, F.lit(False))
        .unionByName(deletes.withColumn(EVENTS, F.lit(None).cast(events_type)).withColumn(st.DELETED, F.lit(True)))
        .withColumn(st.BUCKET, table.bucket())
        .localCheckpoint(eager=True)
    )
    writes = st.write_changes(
        spark, {"state": state}, table, state_changes, state.get("snapshotDue", []), upserts=True
    )
    return {
        **merged,
        "state": {
            "dropped": 0,
            "duplicates": 0,
            "watermarkMicros": None,
            "tables": {
                CDC_TABLE: {"schema": table.schema, "hash": table.hash, "buckets": table.buckets, "writes": writes}
            },
        },
        "cdc": {
            **merged["cdc"],
            "output": output,
            "sequenceType": st.duck_type_of(fields[layout["sequence"][0]].dataType),
            **({"truncate": json.dumps(moved)} if moved is not None else {}),
        },
    }


def merge_target(spark, request, spec, source, identity, columns, staging):
    """The MERGE (table-sink.ts `mergeBatch`, merge-operation.ts) on the `identity` columns: matched
    rows updated or deleted, the rest inserted; only files holding a matched row are rewritten (with
    the rows they keep)."""
    from pyspark.sql import functions as F

    import ebb_spark_batch as batch

    target = spec["target"]
    key_cols = [F.col(quote(k)) for k in identity]
    table_uri = request["output"]["tableUri"].rstrip("/")
    staged_uri = f"{table_uri}/{staging}"
    marks = source.select(*key_cols, F.col(DELETE_MARK))
    files = target["files"]
    if files:
        places = spark.createDataFrame([(st.scheme_less(f["uri"]), f["path"]) for f in files], "__file string, __path string")
        existing = (
            spark.read.schema(source.select(*[F.col(quote(c)) for c in columns]).schema)
            .parquet(*[f["uri"] for f in files])
            .withColumn("__file", st.path_key(F.col("_metadata.file_path")))
            .join(F.broadcast(places), "__file")
            .drop("__file")
        )
        matched = existing.join(marks, identity, "inner").localCheckpoint(eager=True)
        removed = sorted(r["__path"] for r in matched.select("__path").distinct().collect())
        kept = existing.where(F.col("__path").isin(removed)).join(marks, identity, "left_anti").select(*columns)
    else:
        matched = source.limit(0).withColumn("__path", F.lit(None).cast("string"))
        removed = []
        kept = None
    written = source.where(~F.col(DELETE_MARK)).select(*[F.col(quote(c)) for c in columns])
    out = written if kept is None else kept.unionByName(written)
    schema = batch.nullable(source.select(*[F.col(quote(c)) for c in columns]).schema)
    out.write.mode("errorifexists").option("compression", "snappy").parquet(staged_uri)
    stats = batch.file_stats(spark, staged_uri, schema)

    matched_keys = matched.select(*key_cols).distinct()
    counts = {
        "inserted": written.join(matched_keys, identity, "left_anti").count(),
        "updated": matched.where(~F.col(DELETE_MARK)).count(),
        "deleted": matched.where(F.col(DELETE_MARK)).count(),
    }
    change_data = []
    if target["changeData"]:
        kind = lambda name: F.lit(name).alias(CHANGE_TYPE)  # noqa: E731
        feed = (
            matched.where(~F.col(DELETE_MARK))
            .select(*columns, kind("update_preimage"))
            .unionByName(written.join(matched_keys, identity, "left_semi").select(*columns, kind("update_postimage")))
            .unionByName(matched.where(F.col(DELETE_MARK)).select(*columns, kind("delete")))
            .unionByName(written.join(matched_keys, identity, "left_anti").select(*columns, kind("insert")))
        )
        feed_uri = f"{staged_uri}/_change_data"
        feed = feed.localCheckpoint(eager=True)
    if target["changeData"] and feed.count() > 0:
        feed.coalesce(1).write.mode("errorifexists").option("compression", "snappy").parquet(feed_uri)
        fs, folder = batch.hadoop_fs(spark, feed_uri)
        for status in fs.listStatus(folder):
            name = status.getPath().getName()
            if name.endswith(".parquet"):
                change_data.append({"path": f"{staging}/_change_data/{name}", "size": int(status.getLen())})
    return {
        "schema": schema,
        "files": stats,
        "removes": removed,
        "changeData": sorted(change_data, key=lambda f: f["path"]),
        "cdc": {"rows": counts, "copied": 0 if kept is None else kept.count()},
    }
