"""A `kafka` batch's input (ebb_spark_batch.py step 2): the records of the planned offsets, decoded.

Ebb plans the batch (shared/engine/kafka-batch-plan.ts): for each partition the offsets [from, until)
the DuckDB path would fetch. The job reads exactly those with Kafka's Java client (the kafka-clients
jar Spark's Kafka connector runs on; the connector itself is not to be had where Ebb builds, see
functions/spark/pom.xml): one consumer per batch, assigned the partitions (no group, nothing
committed to the broker), positioned at `from`, polled until its position reaches `until`. A
partition whose `from` is gone to retention fails the batch (`input`), never skips.

The records come in as Spark's Kafka source spells them (key and value binary, headers' values
binary, timestamp in epoch ms) and are decoded into the columns the DuckDB path gives the flow's SQL
(shared/engine/kafka-source.ts `kafkaLayout`): `key` (text, or binary with key_format bytes),
`value` (text, binary, JSON text, or with a declared schema a struct of its fields, a record that
does not fit failing the batch as `bad_records: fail` does), `topic`, `partition`, `offset`,
`timestamp` (TIMESTAMP_NTZ, UTC), `headers` (an array of key/value text structs).

Secrets: the request names the environment variables that hold a password or CA certificates; their
values go into the consumer's properties only, never into a message or a log line.
"""

import os
import time



class KafkaReadFailure(Exception):
    """The planned records could not be read (ebb_spark_batch.py answers it as an `input` failure)."""

RAW_SCHEMA = (
    "key BINARY, value BINARY, topic STRING, `partition` INT, `offset` BIGINT, `timestamp` BIGINT, "
    "headers ARRAY<STRUCT<key: STRING, value: BINARY>>, __ebb_part BIGINT"
)
POLL_MS = 500
# A partition that hands back no record for this long, short of its planned end, fails the batch.
STALL_SECONDS = 120


def load(spark, spec, ordered, value_ddl):
    """The batch's records as the DataFrame `source` (with `__ebb_part`/`__ebb_pos` when `ordered`);
    `value_ddl`: the declared schema of a JSON value as Spark DDL, or None."""
    from pyspark.sql import functions as F

    raw = spark.createDataFrame(read_ranges(spark, spec), RAW_SCHEMA)
    columns = [
        key_column(spec).alias("key"),
        value_column(spec, value_ddl).alias("value"),
        F.col("topic"),
        F.col("partition"),
        F.col("offset"),
        F.expr("CAST(timestamp_millis(`timestamp`) AS TIMESTAMP_NTZ)").alias("timestamp"),
        F.expr("transform(headers, h -> named_struct('key', h.key, 'value', CAST(h.value AS STRING)))").alias(
            "headers"
        ),
    ]
    order = [F.col("__ebb_part"), F.col("offset").alias("__ebb_pos")] if ordered else []
    return raw.select(columns + order)


def newest_ms(source):
    """The batch's newest record timestamp (epoch ms), or None without records: Ebb dates the commit
    after it, as the DuckDB path does (micro-batch.ts `timestampFloor`)."""
    [row] = source.selectExpr("max(unix_millis(CAST(`timestamp` AS TIMESTAMP))) AS newest").collect()
    return row["newest"]


def key_column(spec):
    from pyspark.sql import functions as F

    return F.col("key") if spec["keyFormat"] == "bytes" else F.col("key").cast("string")


def value_column(spec, value_ddl):
    from pyspark.sql import functions as F

    fmt = spec["valueFormat"]
    if fmt == "bytes":
        return F.col("value")
    text = F.col("value").cast("string")
    if fmt == "string":
        return text
    if value_ddl is None:
        # JSON without a schema: the text, which must parse (as DuckDB's JSON cast requires).
        parses = F.get_json_object(text, "$").isNotNull() | (F.trim(text) == "null")
        return F.when(text.isNull() | parses, text).otherwise(F.raise_error(F.lit("a Kafka record's value is not valid JSON")))
    return F.from_json(text, value_ddl, {"mode": "FAILFAST"})


def read_ranges(spark, spec):
    """Every record of the planned ranges, as rows of RAW_SCHEMA (the driver reads; Spark decodes)."""
    ranges = [r for r in spec["ranges"] if r["until"] > r["from"]]
    if not ranges:
        return []
    from py4j.java_gateway import JavaClass

    jvm = spark.sparkContext._jvm
    consumer_class = jvm.org.apache.kafka.clients.consumer.KafkaConsumer
    if not isinstance(consumer_class, JavaClass):
        raise KafkaReadFailure(
            "the Spark job has no Kafka client on its class path: on AWS set the construct's sparkEngine.kafkaClient, "
            "locally run functions/spark/setup.sh (kafka-clients in EBB_SPARK_JARS)"
        )
    consumer = consumer_class(consumer_properties(jvm, spec["connection"]))
    rows = []
    try:
        for place, planned in enumerate(ranges):
            rows.extend(read_range(jvm, consumer, planned, place))
    except KafkaReadFailure:
        raise
    except Exception as error:  # a py4j error carries the Java exception's class and message
        raise KafkaReadFailure(f"could not read Kafka: {first_java_line(error)}") from error
    finally:
        consumer.close()
    return rows


def read_range(jvm, consumer, planned, place):
    topic, partition, start, until = planned["topic"], planned["partition"], planned["from"], planned["until"]
    where = jvm.org.apache.kafka.common.TopicPartition(topic, partition)
    assigned = jvm.java.util.ArrayList()
    assigned.add(where)
    consumer.assign(assigned)
    consumer.seek(where, start)
    poll = jvm.java.time.Duration.ofMillis(POLL_MS)
    rows = []
    last_progress = time.monotonic()
    while consumer.position(where) < until:
        taken = 0
        for record in consumer.poll(poll).records(where):
            offset = record.offset()
            if offset >= until:
                break
            taken += 1
            headers = [(h.key(), to_bytes(h.value())) for h in record.headers().toArray()]
            rows.append(
                (to_bytes(record.key()), to_bytes(record.value()), topic, partition, offset, record.timestamp(), headers, place)
            )
        if taken == 0 and time.monotonic() - last_progress > STALL_SECONDS:
            raise KafkaReadFailure(
                f"Kafka {topic}/{partition} gave no record at offset {consumer.position(where)} for {STALL_SECONDS} s, short of the planned {until}",
            )
        if taken:
            last_progress = time.monotonic()
    if rows and rows[0][4] < start:
        raise KafkaReadFailure(f"Kafka {topic}/{partition} answered offset {rows[0][4]} before the planned {start}")
    return rows


def consumer_properties(jvm, connection):
    """The consumer's settings: no group, nothing committed, a gone offset an error (never a reset)."""
    props = jvm.java.util.Properties()
    deserializer = "org.apache.kafka.common.serialization.ByteArrayDeserializer"
    settings = {
        "bootstrap.servers": ",".join(connection["bootstrapServers"]),
        "key.deserializer": deserializer,
        "value.deserializer": deserializer,
        "enable.auto.commit": "false",
        "auto.offset.reset": "none",
        "client.id": "ebb-spark",
        "security.protocol": connection["protocol"],
    }
    sasl = connection.get("sasl")
    if sasl:
        module = (
            "org.apache.kafka.common.security.plain.PlainLoginModule"
            if sasl["mechanism"] == "PLAIN"
            else "org.apache.kafka.common.security.scram.ScramLoginModule"
        )
        password = required_env(sasl["passwordEnv"])
        settings["sasl.mechanism"] = sasl["mechanism"]
        settings["sasl.jaas.config"] = (
            f'{module} required username="{jaas_escape(sasl["username"])}" password="{jaas_escape(password)}";'
        )
    if connection.get("caEnv"):
        settings["ssl.truststore.type"] = "PEM"
        settings["ssl.truststore.certificates"] = required_env(connection["caEnv"])
    for name, value in settings.items():
        props.setProperty(name, value)
    return props


def required_env(name):
    value = os.environ.get(name)
    if not value:
        raise KafkaReadFailure(f"the Kafka source names the environment variable {name}, which the Spark job does not have")
    return value


def jaas_escape(text):
    return text.replace("\\", "\\\\").replace('"', '\\"')


def to_bytes(value):
    return None if value is None else bytes(value)


def first_java_line(error):
    text = str(getattr(error, "java_exception", None) or error)
    return text.strip().splitlines()[0][:500] if text.strip() else type(error).__name__
