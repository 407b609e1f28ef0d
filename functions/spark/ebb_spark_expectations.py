"""A dataset's expectations over the rows a Spark batch is about to write (Ebb's expectations.ts, on Spark).

The same rules as the DuckDB engine, so the event log's data quality metrics do not depend on the engine:

1. Each condition (Spark SQL, as the user wrote it) is one boolean expression over the rows' columns; one
   that Spark cannot resolve, or that is not a boolean, fails the batch as kind `condition`.
2. Each row gets one flag per expectation: whether its condition is TRUE. NULL is not TRUE, so it
   counts as failed (and `drop` removes the row).
3. Passed and failed rows are counted per expectation in one aggregate; a `fail` expectation with a
   failed row fails the batch as kind `expectation` (its name, count and one failing row), before
   anything is written.
4. The rows to write: all of them, less those failing a `drop` expectation.

The flagged rows are persisted (memory, then disk): the counts and the write read them once.
"""

import json

FLAG_PREFIX = "__ebb_expect_"


class ExpectationFailure(Exception):
    """A `fail` expectation a row failed, or a condition that does not apply (`kind`); the message says
    what of the expectation (Ebb names the expectation and its dataset before it)."""

    def __init__(self, kind, message, details=None):
        super().__init__(message)
        self.kind = kind
        self.details = details or {}


def apply_expectations(rows, expectations):
    """Steps 1-4: the rows to write, the manifest's data quality block and the persisted frame to release
    once the rows are written (both None without expectations)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType, NullType
    from pyspark.sql.utils import AnalysisException, ParseException

    if not expectations:
        return rows, None, None

    # 1. Each condition alone, so a failure names its expectation.
    flags = []
    for i, expectation in enumerate(expectations):
        try:
            condition = F.expr(f"({expectation['condition']})")
            data_type = rows.select(condition.alias("c")).schema["c"].dataType
        except (AnalysisException, ParseException) as error:
            message = str(error).strip().split("\n")[0]
            raise ExpectationFailure(
                "condition",
                f"does not apply to the flow's rows ({message}); change it to name the rows' columns, or the flow's SQL to give them",
                {"expectation": expectation["name"]},
            ) from error
        if not isinstance(data_type, (BooleanType, NullType)):
            raise ExpectationFailure(
                "condition",
                f'is a {data_type.simpleString()}, not a boolean: write a condition that is true or false for each row (e.g. "amount > 0")',
                {"expectation": expectation["name"], "type": data_type.simpleString()},
            )
        flags.append(F.coalesce(condition, F.lit(False)).alias(f"{FLAG_PREFIX}{i}"))

    # 2. The rows, once, with their flags.
    columns = [F.col(f"`{name.replace('`', '``')}`") for name in rows.columns]
    flagged = rows.select(*columns, *flags).persist(StorageLevel.MEMORY_AND_DISK)
    flag = lambda i: F.col(f"{FLAG_PREFIX}{i}")  # noqa: E731
    dropping = [flag(i) for i, e in enumerate(expectations) if e["onViolation"] == "drop"]
    kept = F.lit(True)
    for column in dropping:
        kept = kept & column

    # 3. Counts, and the first `fail` expectation a row failed.
    aggregates = [F.count(F.lit(1)).alias("total"), F.sum(F.when(kept, 1).otherwise(0)).alias("kept")]
    aggregates += [F.sum(F.when(flag(i), 1).otherwise(0)).alias(f"passed_{i}") for i in range(len(expectations))]
    counted = flagged.agg(*aggregates).collect()[0]
    total = int(counted["total"])
    metrics = []
    for i, expectation in enumerate(expectations):
        passed = int(counted[f"passed_{i}"] or 0)
        metrics.append({"name": expectation["name"], "passedRecords": passed, "failedRecords": total - passed})
    without_flags = flagged.select(*columns)
    for i, expectation in enumerate(expectations):
        if expectation["onViolation"] != "fail" or metrics[i]["failedRecords"] == 0:
            continue
        # With its NULLs, as DuckDB's to_json writes the sample row.
        as_json = F.to_json(F.struct(*columns), {"ignoreNullFields": "false"})
        sample = [r[0] for r in flagged.where(~flag(i)).select(as_json).limit(1).collect()]
        flagged.unpersist()
        raise ExpectationFailure(
            "expectation",
            f'expectation "{expectation["name"]}" failed on {metrics[i]["failedRecords"]} rows',
            {
                "expectation": expectation["name"],
                "failedRecords": metrics[i]["failedRecords"],
                "row": sample[0] if sample else json.dumps(None),
            },
        )

    # 4. The rows to write.
    rows_out = without_flags if not dropping else flagged.where(kept).select(*columns)
    kept_rows = int(counted["kept"] or 0)
    return rows_out, {"droppedRecords": total - kept_rows, "expectations": metrics}, flagged
