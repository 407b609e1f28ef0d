# The peer's ingestion, in Python: open-source SDP 4.3 has no read_files and streams files only from
# Python (a SQL path table such as json.`…` is a batch relation there). The same flows as
# transformations/ingest.sql, which Ebb runs; every other file of the project is shared unchanged.
from pyspark import pipelines as dp
from pyspark.sql import SparkSession
from pyspark.sql.functions import lit

spark = SparkSession.active()
landing = spark.conf.get("landing")

dp.create_streaming_table("all_orders")


def market(name):
    @dp.append_flow(target="all_orders", name=f"{name.lower()}_orders")
    def flow():
        return (
            spark.readStream.format("json")
            .schema("id BIGINT, amount DOUBLE")
            .load(f"{landing}/{name.lower()}")
            .withColumn("market", lit(name))
        )


market("US")
market("EU")
