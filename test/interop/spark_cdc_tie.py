"""The AUTO CDC tie hash as the Spark job computes it (functions/spark/ebb_spark_cdc.py `tie_hash`), on
the engine's own pinned Spark (EBB_SPARK_PYTHON), for spark-cdc-tie.test.ts.

Reads one JSON request on stdin, {"cases": [{"columns": [{"name", "type"}], "rows": [[text | null,
…]]}]} (each value the text Spark casts to the column's type), and prints one JSON line, per case
per row {"json": to_json's text, "hash": the tie hash}.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "functions", "spark"))

answers = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from ebb_spark_cdc import quote, tie_hash  # noqa: E402


def main():
    request = json.load(sys.stdin)
    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    result = []
    for case in request["cases"]:
        names = [c["name"] for c in case["columns"]]
        texts = spark.createDataFrame(
            [(i, *row) for i, row in enumerate(case["rows"])],
            ", ".join(["__i long", *[f"{quote(n)} string" for n in names]]),
        )
        typed = texts.select("__i", *[F.col(quote(c["name"])).cast(c["type"]).alias(c["name"]) for c in case["columns"]])
        fields = [f for f in typed.schema.fields if f.name != "__i"]
        text = F.to_json(F.struct(*[F.col(quote(f.name)) for f in fields]), {"ignoreNullFields": "false"})
        rows = typed.select("__i", tie_hash(fields).alias("hash"), text.alias("json")).orderBy("__i").collect()
        result.append([{"json": r["json"], "hash": r["hash"]} for r in rows])
    spark.stop()
    answers.write(json.dumps(result) + "\n")


main()
