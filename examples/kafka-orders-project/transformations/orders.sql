-- The value is JSON text ({"id": 1, "cents": 1250}); from_json reads it with a Spark DDL schema.
-- Batches of at most 10,000 records (maxOffsetsPerTrigger). The source's own columns (key, topic,
-- partition, offset, timestamp) are kept beside the parsed fields.
CREATE OR REFRESH STREAMING TABLE orders
COMMENT 'Orders from the orders topic'
AS SELECT
  parsed.id AS id,
  parsed.cents / 100.0 AS euros,
  key,
  partition,
  `offset`,
  timestamp
FROM (
  SELECT from_json(CAST(value AS STRING), 'id BIGINT, cents BIGINT') AS parsed, key, partition, `offset`, timestamp
  FROM STREAM read_kafka(
    bootstrapServers => '${bootstrap}',
    subscribe => 'orders',
    startingOffsets => 'earliest',
    maxOffsetsPerTrigger => 10000
  )
);
