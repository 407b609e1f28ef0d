"""The rules of applying change events, as cdc-statements.ts writes them in DuckDB SQL, over Spark
DataFrames of events (keys, `__cdc_seq`, `__cdc_op`, `__cdc_tie`, values, `__cdc_at`), one per key
and sequence (the tie rule already applied): a key's SCD type 1 row, the SCD type 1 events worth
keeping, and a key's SCD type 2 versions. ebb_spark_cdc_apply.py applies them; each function names the
SQL it mirrors, whose comment says why.
"""

from ebb_spark_cdc import CDC_OP_COLUMN, quote

SEQ = "__cdc_seq"
OP = CDC_OP_COLUMN
AT = "__cdc_at"
START_AT = "__START_AT"
END_AT = "__END_AT"


def scd1_rows(events, keys, values, ignore_null_updates, truncated):
    """cdc-statements.ts `scd1RowsSql`: per key, the upserts after its last delete and above the
    truncate sequence decide its row (each column the latest value; the latest non-NULL one with
    `ignore_null_updates`)."""
    from pyspark.sql import functions as F

    key_cols = [F.col(quote(k)) for k in keys]
    last_delete = events.where(F.col(OP) == F.lit("delete")).groupBy(*key_cols).agg(F.max(SEQ).alias("__d"))
    live = events.join(last_delete, keys, "left").where(
        (F.col(OP) == F.lit("upsert"))
        & (F.col("__d").isNull() | (F.col(SEQ) > F.col("__d")))
        & (F.lit(True) if truncated is None else F.col(SEQ) > F.lit(truncated))
    )
    if not values:
        return live.select(*key_cols).distinct()

    # max_by skips rows whose ordering is NULL: the non-NULL values' latest, as FILTER does in DuckDB.
    def latest(v):
        order = F.when(F.col(quote(v)).isNotNull(), F.col(SEQ)) if ignore_null_updates else F.col(SEQ)
        return F.max_by(F.col(quote(v)), order).alias(v)

    return live.groupBy(*key_cols).agg(*[latest(v) for v in values])


def scd1_retained(events, keys, ignore_null_updates, truncated, expired_before_micros):
    """cdc-statements.ts `scd1RetainedSql`: the events worth keeping per key; a lone delete applied
    before `expired_before_micros` is dropped (its tombstone expired)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    per_key = Window.partitionBy(*[F.col(quote(k)) for k in keys])
    seq = F.col(SEQ)
    if ignore_null_updates:
        last_delete = F.max(F.when(F.col(OP) == F.lit("delete"), seq)).over(per_key)
        keep = seq >= F.coalesce(last_delete, seq)
    else:
        keep = seq == F.max(seq).over(per_key)
    kept = (
        events.where(F.lit(True) if truncated is None else seq > F.lit(truncated))
        .withColumn("__keep", keep)
        .where(F.col("__keep"))
        .drop("__keep")
    )
    expired = (
        (F.count(F.lit(1)).over(per_key) == 1)
        & (F.col(OP) == F.lit("delete"))
        & (F.unix_micros(F.col(AT).cast("timestamp")) < F.lit(expired_before_micros))
    )
    return kept.withColumn("__x", expired).where(~F.col("__x")).drop("__x")


def scd2_versions(events, keys, values, tracked, ignore_null_updates):
    """cdc-statements.ts `scd2VersionsSql`: a key's events in sequence order form versions. An upsert
    starts one when the previous event is not an upsert or a tracked column changed (after
    `ignore_null_updates` filled it, within the stretch since the last delete); else it updates the
    open one. A version runs from its first event's sequence (`__START_AT`) to the next event after
    its last (`__END_AT`: the next version's start or the closing delete; NULL while current)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    key_cols = [F.col(quote(k)) for k in keys]
    ordered = Window.partitionBy(*key_cols).orderBy(F.col(SEQ))
    running = ordered.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    upsert = F.col(OP) == F.lit("upsert")
    segmented = events.withColumn("__seg", F.sum(F.when(F.col(OP) == F.lit("delete"), 1).otherwise(0)).over(running))
    if ignore_null_updates:
        since_delete = (
            Window.partitionBy(*key_cols, F.col("__seg"))
            .orderBy(F.col(SEQ))
            .rowsBetween(Window.unboundedPreceding, Window.currentRow)
        )
        effective = [F.last(F.when(upsert, F.col(quote(v))), ignorenulls=True).over(since_delete).alias(v) for v in values]
    else:
        effective = [F.when(upsert, F.col(quote(v))).alias(v) for v in values]
    filled = segmented.select(*key_cols, F.col(SEQ), F.col(OP), *effective)
    # DuckDB compares the tracked columns as one struct: NULLs equal, as `<=>` does column by column.
    changed = F.lit(False)
    for c in tracked:
        changed = changed | ~F.lag(F.col(quote(c))).over(ordered).eqNullSafe(F.col(quote(c)))
    starts = upsert & (~F.lag(F.col(OP)).over(ordered).eqNullSafe(F.lit("upsert")) | changed)
    marked = filled.withColumn("__starts", starts).withColumn("__next", F.lead(F.col(SEQ)).over(ordered))
    versions = marked.withColumn("__version", F.sum(F.when(F.col("__starts"), 1).otherwise(0)).over(running))
    # max_by keeps a NULL value of the latest row (DuckDB's `last(… ORDER BY seq)`).
    return (
        versions.where(upsert)
        .groupBy(*key_cols, F.col("__version"))
        .agg(
            *[F.max_by(F.col(quote(v)), F.col(SEQ)).alias(v) for v in values],
            F.min(F.col(SEQ)).alias(START_AT),
            F.max_by(F.col("__next"), F.col(SEQ)).alias(END_AT),
        )
        .drop("__version")
    )
