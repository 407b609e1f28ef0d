"""A stream-stream join on Spark: the DuckDB engine's steps (shared/engine/stateful/stream-join.ts) over
the same state tables (`join_left`, `join_right`: each side's waiting rows keyed by the batch and the
place they arrived in, bucketed by `fib32`), so a join's state written by one engine is continued by
the other.

The SQL is the flow's compiled plan (shared/pipeline/plan join-flow-plan.ts), printed as Spark SQL by
Ebb (spark-state.ts): `innerSql` for the pairs, `matchSql` for the left rows that matched, and `sql`
itself for a LEFT join's unmatched rows. This module only binds `source` and the joined stream to the
parts of each side and runs them:

1. Number each side's rows in arrival order (the planned file or slice, then the row: the order the
   DuckDB engine loads them in), from 1.
2. The join's watermark before the batch is the lower of the two sides' (once both have one); a row
   older than it, or without an event time, is late on either side: dropped and counted.
3. Each side's watermark advances from its kept rows; the join's after the batch is the lower.
4. The waiting rows a new row of the other side could pair with, or that the batch lets go.
5. Pairs: new left rows x all right rows, then waiting left rows x new right rows (each pair once).
6. Left rows that matched are marked; a left row at `t` is let go once `t - lo` is behind the
   watermark, a right row once `t + hi` is; a LEFT join writes each let-go unmatched left row once.
7. The state's changes, one file per touched bucket (ebb_spark_state.write_changes).
"""

from ebb_spark_state import (
    BUCKET,
    DELETED,
    ROW_PART,
    ROW_POS,
    StateFailure,
    StateTable,
    duck_type,
    micros,
    numbered,
    quote,
    same_schema,
    spark_schema,
    write_changes,
)

# The DuckDB engine's names (join-flow-plan.ts, stream-join.ts, spark-batch-contract.ts).
JOIN_SEQ = "__ebb_seq"
JOIN_ROW = "__ebb_row"
JOIN_MATCHED = "__ebb_matched"
JOIN_LEFT_TABLE = "join_left"
JOIN_RIGHT_TABLE = "join_right"
JOIN_OUTPUT_VIEW = "__ebb_join_out"
SOURCE_VIEW = "source"
# Columns a side's waiting rows keep, by the type both engines store them with.
COLUMN_TYPES = {"BIGINT", "INTEGER", "SMALLINT", "TINYINT", "VARCHAR", "BOOLEAN", "DOUBLE", "TIMESTAMP", "DATE"}
KEY = [{"name": JOIN_SEQ, "type": "BIGINT"}, {"name": JOIN_ROW, "type": "BIGINT"}]


def join_watermark(marks):
    """The join's watermark: the lower of the two sides', once both have one (stream-join.ts)."""
    if marks.get("left") is None or marks.get("right") is None:
        return None
    return min(marks["left"], marks["right"])


def advance(previous, newest, delay):
    candidate = None if newest is None else int(newest) - int(delay)
    if previous is None:
        return candidate
    return previous if candidate is None else max(previous, candidate)


def run_sql(spark, sql):
    from pyspark.sql.utils import AnalysisException, ParseException

    try:
        frame = spark.sql(sql)
        frame.schema
    except (AnalysisException, ParseException) as error:
        raise StateFailure("analysis", str(error).split("\n")[0]) from error
    return frame.localCheckpoint(eager=True)


class Side:
    """One side's batch (steps 1-2): its kept rows keyed (seq, row), its columns, its figures."""

    def __init__(self, spark, frame, input_spec, mark, setting, seq, before, left):
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        rows = numbered(spark, frame, input_spec)
        if mark["column"] not in rows.columns:
            raise StateFailure("job", f"the {setting} column {mark['column']} is not a column of its stream")
        # 1. Numbered from 1 in arrival order, late rows too (as `row_number() OVER ()` on DuckDB).
        rows = rows.withColumn(JOIN_ROW, F.row_number().over(Window.orderBy(ROW_PART, ROW_POS)).cast("long"))
        self.names = [c for c in rows.columns if c not in (ROW_PART, ROW_POS, JOIN_ROW)]
        fields = {f.name: f for f in rows.schema.fields}
        self.columns = [
            {"name": c, "type": duck_type(fields[c], "a stream-stream join keeping", COLUMN_TYPES)} for c in self.names
        ]
        self.column = mark["column"]
        self.delay = int(mark["delayMicros"])
        # 2.
        t = micros(self.column)
        late = t.isNull() | ((t < F.lit(int(before))) if before is not None else F.lit(False))
        figures = rows.agg(
            F.sum(F.when(late, 1).otherwise(0)).alias("late"),
            F.max(F.when(~late, t)).alias("newest"),
            F.min(F.when(~late, t)).alias("oldest"),
        ).collect()[0]
        self.dropped = int(figures["late"] or 0)
        self.newest = None if figures["newest"] is None else int(figures["newest"])
        self.oldest = None if figures["oldest"] is None else int(figures["oldest"])
        self.new = (
            rows.where(~late)
            .select(
                F.lit(seq).cast("long").alias(JOIN_SEQ),
                F.col(JOIN_ROW),
                *[F.col(quote(c)) for c in self.names],
                *([F.lit(False).alias(JOIN_MATCHED)] if left else []),
            )
            .localCheckpoint(eager=True)
        )

    def time(self):
        return micros(self.column)

    def user(self, frame, ids=False):
        """The side's columns as the flow's SQL reads them (with the row's key for `matchSql`)."""
        return frame.select(*[quote(c) for c in ([JOIN_SEQ, JOIN_ROW] if ids else []) + self.names])


def waiting(spark, table, time, ranges):
    """Step 4: the parent's rows of the table whose event time lies in one of the ranges (µs: `from`
    inclusive, `to` inclusive unless `open`), stream-join.ts `waitingSql`."""
    from functools import reduce

    from pyspark.sql import functions as F

    raw = table.raw([int(b) for b in table.parts])
    if raw is None:
        return spark.createDataFrame([], spark_schema(table.columns))
    terms = []
    for r in ranges:
        if r is None:
            continue
        term = (time < F.lit(int(r["to"]))) if r.get("open") else (time <= F.lit(int(r["to"])))
        if r.get("from") is not None:
            term = term & (time >= F.lit(int(r["from"])))
        terms.append(term)
    merged = table.merged(raw).drop(BUCKET)
    keep = reduce(lambda a, b: a | b, terms) if terms else F.lit(False)
    return merged.where(keep).localCheckpoint(eager=True)


def apply(spark, request, source, joined):
    """Steps 1-7: the rows left in JOIN_OUTPUT_VIEW for the batch's SQL, and what Ebb records."""
    from pyspark.sql import functions as F

    state = request["state"]
    join = state["join"]
    seq = int(state["seq"])
    previous = {k: v for k, v in (join.get("previous") or {}).items() if v is not None}
    before = join_watermark(previous)
    lo, hi = int(join["range"]["loMicros"]), int(join["range"]["hiMicros"])

    # 1-2.
    left = Side(spark, source, request["input"], join["left"], "watermark.column", seq, before, True)
    right = Side(spark, joined, request["joinedInput"], join["right"], "join.watermark.column", seq, before, False)

    # 3.
    marks = {}
    for name, side in (("left", left), ("right", right)):
        mark = advance(previous.get(name), side.newest, side.delay)
        if mark is not None:
            marks[name] = mark
    after = join_watermark(marks)
    result = {
        "dropped": left.dropped + right.dropped,
        "duplicates": 0,
        "watermarkMicros": after,
        "tables": {},
        "join": {"pairs": 0, "watermarks": marks},
    }

    # The parent's tables; one of another shape is answered as is, for Ebb to refuse by name.
    def table(name, spec, value):
        schema = {"key": KEY, "value": value}
        kept = StateTable(spark, name, spec.get("stored"), spec["buckets"], schema, None)
        return kept, kept.stored is None or same_schema(kept.schema, schema), schema

    left_table, left_same, left_schema = table(
        JOIN_LEFT_TABLE, join["leftTable"], left.columns + [{"name": JOIN_MATCHED, "type": "BOOLEAN"}]
    )
    right_table, right_same, right_schema = table(JOIN_RIGHT_TABLE, join["rightTable"], right.columns)
    if not (left_same and right_same):
        for name, t, schema in ((JOIN_LEFT_TABLE, left_table, left_schema), (JOIN_RIGHT_TABLE, right_table, right_schema)):
            result["tables"][name] = {"schema": schema, "hash": t.hash, "buckets": t.buckets, "writes": []}
        spark.createDataFrame([], "x int").createOrReplaceTempView(JOIN_OUTPUT_VIEW)
        return left.user(left.new), result

    # 4. The waiting rows the batch can pair with or lets go, as stream-join.ts loads them.
    left_state = waiting(
        spark,
        left_table,
        left.time(),
        [
            None if right.oldest is None else {"from": right.oldest + lo, "to": right.newest + hi},
            None if after is None else {"to": after + lo, "open": True},
        ],
    )
    right_state = waiting(
        spark,
        right_table,
        right.time(),
        [
            None if left.oldest is None else {"from": left.oldest - hi, "to": left.newest - lo},
            None if after is None else {"to": after - hi, "open": True},
        ],
    )

    # 5. The flow's SQL with `source` and the stream bound to each half in turn.
    def bind(left_rows, right_rows, ids=False):
        left.user(left_rows, ids).createOrReplaceTempView(SOURCE_VIEW)
        right.user(right_rows).createOrReplaceTempView(join["stream"])

    all_right = right_state.unionByName(right.new)
    bind(left.new, all_right)
    pairs = run_sql(spark, join["innerSql"])
    bind(left_state, right.new)
    pairs = pairs.union(run_sql(spark, join["innerSql"])).localCheckpoint(eager=True)
    result["join"]["pairs"] = pairs.count()

    # 6. Matched left rows; what no later row can match is let go.
    bind(left.new, all_right, ids=True)
    matched = run_sql(spark, join["matchSql"])
    bind(left_state, right.new, ids=True)
    matched = matched.union(run_sql(spark, join["matchSql"])).distinct().withColumn("__ebb_hit", F.lit(True))
    left_all = (
        left_state.unionByName(left.new)
        .join(matched, [JOIN_SEQ, JOIN_ROW], "left")
        .withColumn("__ebb_was", F.col(JOIN_MATCHED))
        .withColumn(JOIN_MATCHED, F.col(JOIN_MATCHED) | F.coalesce(F.col("__ebb_hit"), F.lit(False)))
        .withColumn("__ebb_new", F.col(JOIN_SEQ) == F.lit(seq))
        .drop("__ebb_hit")
        .localCheckpoint(eager=True)
    )
    left_gone = F.lit(False) if after is None else left.time() < F.lit(int(after + lo))
    right_gone = F.lit(False) if after is None else right.time() < F.lit(int(after - hi))

    output = pairs
    if join["type"] == "left":
        unmatched = left_all.where(left_gone & ~F.col(JOIN_MATCHED))
        bind(unmatched, right.new.limit(0))
        outer = run_sql(spark, join["sql"])
        result["join"]["leftOuterRows"] = outer.count()
        output = pairs.union(outer)
    output.localCheckpoint(eager=True).createOrReplaceTempView(JOIN_OUTPUT_VIEW)

    # 7. Upserts (new rows, and marks that changed) and deletes (rows let go), per table.
    def columns_of(t, deleted):
        return [F.col(quote(c["name"])) for c in t.columns] + [F.lit(deleted).alias(DELETED)]

    left_changes = (
        left_all.where(~left_gone & (F.col("__ebb_new") | (F.col(JOIN_MATCHED) != F.col("__ebb_was"))))
        .select(*columns_of(left_table, False))
        .unionByName(left_all.where(left_gone & ~F.col("__ebb_new")).select(*columns_of(left_table, True)))
    )
    right_changes = (
        right.new.where(~right_gone)
        .select(*columns_of(right_table, False))
        .unionByName(right_state.where(right_gone).select(*columns_of(right_table, True)))
    )
    for name, t, changes, spec in (
        (JOIN_LEFT_TABLE, left_table, left_changes, join["leftTable"]),
        (JOIN_RIGHT_TABLE, right_table, right_changes, join["rightTable"]),
    ):
        # Each table's files staged in a folder of its own (write_buckets writes `<staging>/<kind>`).
        own = dict(request, state=dict(state, stagingUri=state["stagingUri"].rstrip("/") + "/" + name))
        changes = changes.withColumn(BUCKET, t.bucket()).localCheckpoint(eager=True)
        writes = write_changes(spark, own, t, changes, spec.get("snapshotDue", []), upserts=True)
        result["tables"][name] = {"schema": t.schema, "hash": t.hash, "buckets": t.buckets, "writes": writes}
    return left.user(left.new), result
