"""An AUTO CDC batch's events in the job: which of the flow's classified events are staged for the
apply (shared/engine/auto-cdc/batch-reduction.ts decides what may be dropped, and sends it in the
request's `cdc.reduce`; cdc-statements.ts is the apply this stands in front of).

1. `latest` / `since-last-delete` (SCD type 1): per key, only the events at its highest sequence, or
   from its last delete on; `every-sequence` (SCD type 2) keeps every sequence.
2. Ties: of the events of one key at one sequence, only the one the apply's tie rule picks
   (`mergedEventsSql`: a delete first, then the higher `md5(to_json(struct_pack(keys, values)))`),
   when every column of the hashed row is of a type whose JSON Spark spells as DuckDB does
   (`ties.types`, proven on a corpus by test/interop/spark-cdc-tie.test.ts); else all are staged and
   the apply picks. Events of one batch share their apply time, so the rule's last term never decides
   here, and the event kept wins against the state's events of that sequence exactly as the dropped
   ones would have lost to it.

Events the apply refuses (a NULL key or sequence) and truncates are staged as they are.
"""

# The staged column holding an AUTO CDC event's kind (spark-batch-contract.ts CDC_OP_COLUMN).
CDC_OP_COLUMN = "__cdc_op"
# The tie hash's column while ties are resolved (cdc-statements.ts TIE).
TIE_COLUMN = "__cdc_tie"

# Types whose order and equality Spark and DuckDB agree on (byte order for strings; no -0.0 or NaN):
# an event is dropped only when another of its key has a higher sequence by that order.
AGREED_TYPES = {
    "long",
    "integer",
    "short",
    "byte",
    "decimal",
    "string",
    "date",
    "timestamp",
    "timestamp_ntz",
    "boolean",
}


def quote(name):
    return "`" + name.replace("`", "``") + "`"


def reduce_events(rows, reduce):
    """The classified events the apply can still use (steps 1 and 2); a key or sequence column of a
    type outside AGREED_TYPES keeps every event."""
    types = {f.name: f.dataType.typeName() for f in rows.schema.fields}
    if any(types.get(c) not in AGREED_TYPES for c in [*reduce["keys"], *reduce["sequence"]]):
        return rows
    rows = _latest(rows, reduce)
    ties = reduce.get("ties")
    if ties is not None:
        rows = _resolve_ties(rows, reduce, ties)
    return rows


def _applicable(reduce):
    from pyspark.sql import functions as F

    applicable = F.col(quote(CDC_OP_COLUMN)) != F.lit("truncate")
    for c in [*reduce["keys"], *reduce["sequence"]]:
        applicable = applicable & F.col(quote(c)).isNotNull()
    return applicable


def _sequence(reduce):
    from pyspark.sql import functions as F

    return F.struct(*[F.col(quote(c)) for c in reduce["sequence"]])


def _latest(rows, reduce):
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if reduce["keep"] == "every-sequence":
        return rows
    sequence = _sequence(reduce)
    op = F.col(quote(CDC_OP_COLUMN))
    applicable = _applicable(reduce)
    per_key = Window.partitionBy(*[F.col(quote(k)) for k in reduce["keys"]])
    if reduce["keep"] == "latest":
        bound = F.max(F.when(applicable, sequence)).over(per_key)
    else:
        bound = F.max(F.when(applicable & (op == F.lit("delete")), sequence)).over(per_key)
    kept = (~applicable) | bound.isNull() | (sequence >= bound)
    return rows.withColumn("__cdc_kept", kept).where(F.col("__cdc_kept")).drop("__cdc_kept")


def hashed_columns(output, reduce, ties):
    """The columns of the row the tie rule hashes, in order: the keys, then the written columns
    (`column_list`, else every output column, less `except_column_list`), as cdc-layout.ts resolves
    them from the same plan."""
    keys = list(reduce["keys"])
    listed = ties.get("columnList")
    written = [c for c in (listed if listed is not None else output) if c not in (ties.get("exceptColumnList") or [])]
    return keys + [c for c in written if c not in keys]


def tie_hash(fields):
    """DuckDB's `md5(to_json(struct_pack(...)))` of `fields` (Spark StructFields), as a Spark column:
    NULL fields spelled `null`, a TIMESTAMP without zone as the text DuckDB casts it to."""
    from pyspark.sql import functions as F

    def spelled(field):
        value = F.col(quote(field.name))
        if field.dataType.typeName() == "timestamp_ntz":
            value = value.cast("string")
        return value.alias(field.name)

    text = F.to_json(F.struct(*[spelled(f) for f in fields]), {"ignoreNullFields": "false"})
    return F.md5(text.cast("binary"))


def _resolve_ties(rows, reduce, ties):
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    output = [f.name for f in rows.schema.fields if f.name != CDC_OP_COLUMN]
    by_name = {f.name: f for f in rows.schema.fields}
    columns = hashed_columns(output, reduce, ties)
    if any(c not in by_name or by_name[c].dataType.typeName() not in ties["types"] for c in columns):
        return rows
    op = F.col(quote(CDC_OP_COLUMN))
    tie = tie_hash([by_name[c] for c in columns])
    applicable = _applicable(reduce)
    # A truncate or a refused event of the same key and sequence is no rival: it has its own partition.
    per_event = Window.partitionBy(applicable, *[F.col(quote(k)) for k in reduce["keys"]], _sequence(reduce)).orderBy(
        (op == F.lit("delete")).desc(), F.col(TIE_COLUMN).desc()
    )
    # Ranked among the applicable events only: the others (NULL key or sequence, truncates) all stay.
    rank = F.when(applicable, F.row_number().over(per_event)).otherwise(F.lit(1))
    return (
        rows.withColumn(TIE_COLUMN, tie)
        .withColumn("__cdc_rank", rank)
        .where(F.col("__cdc_rank") == 1)
        .drop("__cdc_rank", TIE_COLUMN)
    )
