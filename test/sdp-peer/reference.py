"""The plain Spark SQL reference of the projects open-source SDP 4.3 cannot run as written.

SDP 4.3 has no expectations (CONSTRAINT … EXPECT) and no AUTO CDC in SQL, so examples/orders-project
and examples/auto-cdc-project are computed here with plain Spark SQL (pyspark 4.3, the peer venv's)
over the same landed files: one Spark session for every project and every update. Each stage lists
the files landed by then; the tables are what the project holds after that update.

Input (argv[1], JSON): {"orders": [[files of update 1], [files of update 2]], "users": [...]}.
Output (stdout, JSON): {"orders": [{table: [rows]} per update], "users": [...]}.
"""
import json
import sys

from pyspark.sql import SparkSession

ORDERS_SCHEMA = "id BIGINT, amount_cents BIGINT, region STRING"
USERS_SCHEMA = "userId BIGINT, name STRING, city STRING, operation STRING, sequenceNum BIGINT"

# examples/orders-project/transformations/*.sql, as plain Spark SQL: the DROP ROW expectation
# valid_id is its WHERE; has_orders only warns, so it changes no row.
ORDERS = {
    "raw_orders": "SELECT * FROM raw",
    "orders": """SELECT id, CAST(amount_cents AS DOUBLE) / 100 AS amount, upper(region) AS region
                 FROM raw WHERE id IS NOT NULL""",
    "revenue_by_region": """SELECT region, count(*) AS orders, round(sum(amount), 2) AS revenue
                            FROM (SELECT CAST(amount_cents AS DOUBLE) / 100 AS amount,
                                         upper(region) AS region
                                  FROM raw WHERE id IS NOT NULL)
                            GROUP BY region""",
}

# examples/auto-cdc-project: AUTO CDC as Databricks documents it, over every change landed so far.
# SCD type 1: each key's latest change by sequenceNum, gone if that change is a DELETE.
# SCD type 2: one version per non-DELETE change, from its sequenceNum to the key's next change.
USERS = {
    "users_current": """SELECT userId, name, city FROM (
                          SELECT *, row_number() OVER (PARTITION BY userId ORDER BY sequenceNum DESC) AS n
                          FROM feed)
                        WHERE n = 1 AND operation <> 'DELETE'""",
    "users_history": """SELECT userId, name, city, __START_AT, __END_AT FROM (
                          SELECT *, sequenceNum AS __START_AT,
                                 lead(sequenceNum) OVER (PARTITION BY userId ORDER BY sequenceNum)
                                   AS __END_AT
                          FROM feed WHERE operation <> 'TRUNCATE')
                        WHERE operation <> 'DELETE'""",
}


def tables(spark, files, schema, view, queries):
    spark.read.schema(schema).json(files).createOrReplaceTempView(view)
    return {
        name: [row.asDict() for row in spark.sql(sql).collect()] for name, sql in queries.items()
    }


def main(stages):
    spark = SparkSession.builder.master("local[1]").appName("ebb-peer-reference").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    out = {
        "orders": [tables(spark, files, ORDERS_SCHEMA, "raw", ORDERS) for files in stages["orders"]],
        "users": [tables(spark, files, USERS_SCHEMA, "feed", USERS) for files in stages["users"]],
    }
    spark.stop()
    json.dump(out, sys.stdout, default=str)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
