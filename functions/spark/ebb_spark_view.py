"""A full recompute of a materialized view kept incrementally (shared/engine/incremental-view.ts), on
Spark: the view's rows and its partials, in Ebb's state layout, so the next refresh on DuckDB merges
the rows its input gains into the partials this job wrote.

1. The view's partial SQL (its compiled `partialSql`, as Spark SQL) over its input, which
   ebb_spark_reads.py registered at the version Ebb planned: the partials per key.
2. The partials merged per key as DuckDB merges them (ebb_spark_state.py `merge_parts`: a DISTINCT
   aggregate's set sorted, its zero and NaN spelled as DuckDB spells them), typed as DuckDB keeps them.
3. The `groups` state table, bucketed by the hash DuckDB computes over the same key
   (ebb_spark_state.py `bucket_column`), one snapshot file per bucket (a full recompute upserts every
   live key: incremental-view.ts writes each bucket as a snapshot too) moved into the view's state
   folder. Ebb writes the state version's manifest from the answer (spark-view-state.ts).
4. The final values from the merged partials (partial-aggregates.ts `finalOf`) as `__ebb_view_final`,
   which the view's compiled final SQL (the request's `sql`) reads for the view's rows.
"""

import ebb_spark_state as state_ops

GROUPS_TABLE = "groups"
# The merged partials the final SQL reads (aggregate-columns.ts VIEW_FINAL).
VIEW_FINAL = "__ebb_view_final"
SCALARS = {"BIGINT", "INTEGER", "SMALLINT", "TINYINT", "DOUBLE", "VARCHAR", "BOOLEAN", "TIMESTAMP", "DATE"}


def apply(spark, request):
    """Steps 1-4; answers the state result Ebb records (spark-batch-contract.ts `sparkStateResultSchema`)."""
    from pyspark.sql import functions as F
    from pyspark.sql.utils import AnalysisException, ParseException

    view = request["state"]["view"]
    # 1.
    try:
        batch = spark.sql(view["partialSql"])
        batch.schema
    except (AnalysisException, ParseException) as error:
        raise state_ops.StateFailure("analysis", str(error).split("\n")[0]) from error
    keys = [state_ops.group_column(j) for j in range(int(view["groupKeys"]))]
    parts = [p for i, a in enumerate(view["aggregates"]) for p in state_ops.parts_of(a["kind"], i)]
    fields = {f.name: f for f in batch.schema.fields}
    # The types whose JSON Spark spells as DuckDB (view-engine-choice.ts SPARK_VIEW_KEY_TYPES, which
    # keeps any other key off Spark before a job starts).
    allowed = state_ops.KEY_TYPES | {"TIMESTAMP", "DATE"}
    schema = {
        "key": [
            {"name": k, "type": state_ops.duck_type(fields[k], "a materialized view grouped by", allowed)}
            for k in keys
        ],
        "value": [
            {
                "name": p,
                "type": state_ops.duck_type(
                    fields[p], "a materialized view aggregating", SCALARS | {t + "[]" for t in SCALARS}
                ),
            }
            for p, _ in parts
        ],
    }
    table = state_ops.StateTable(spark, GROUPS_TABLE, None, view["buckets"], schema, None)

    # 2.
    types = {c["name"]: state_ops.spark_type_of(c["type"]) for c in table.columns}
    merged = batch.groupBy(*[F.col(state_ops.quote(k)) for k in keys]).agg(
        *[state_ops.merge_parts(F.col(state_ops.quote(p)), how, types[p]).cast(types[p]).alias(p) for p, how in parts]
    )
    merged = merged.withColumn(state_ops.BUCKET, table.bucket()).localCheckpoint(eager=True)

    # 3.
    columns = [F.col(state_ops.quote(c["name"])) for c in table.columns]
    changes = merged.select(*columns, F.lit(False).alias(state_ops.DELETED), F.col(state_ops.BUCKET))
    every_bucket = list(range(int(table.buckets)))
    writes = state_ops.write_changes(spark, request, table, changes, every_bucket)

    # 4.
    finals = []
    for i, a in enumerate(view["aggregates"]):
        if a["kind"] == "avg":
            n = F.col(f"__ebb_p{i}_count")
            value = F.col(f"__ebb_p{i}_sum").cast("double") / F.when(n != 0, n)
        elif a["kind"].endswith("_distinct"):
            name = state_ops.parts_of(a["kind"], i)[0][0]
            element = next(c["type"] for c in table.columns if c["name"] == name).strip().upper()[:-2]
            value = state_ops.distinct_final(a["kind"], F.col(name), element)
        else:
            value = F.col(state_ops.parts_of(a["kind"], i)[0][0])
        finals.append(value.alias(state_ops.aggregate_column(i)))
    merged.select(*[F.col(state_ops.quote(k)) for k in keys], *finals).createOrReplaceTempView(VIEW_FINAL)
    return {
        "dropped": 0,
        "duplicates": 0,
        "watermarkMicros": None,
        "tables": {GROUPS_TABLE: {"schema": table.schema, "hash": table.hash, "buckets": table.buckets, "writes": writes}},
    }
