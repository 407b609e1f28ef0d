-- Ebb names the record's columns data, shard_id, sequence_number and approximate_arrival_timestamp
-- (docs/sources.md); the data is JSON text ({"page": "/", "user_id": 7}).
CREATE OR REFRESH STREAMING TABLE clicks
AS SELECT
  parsed.page AS page,
  parsed.user_id AS user_id,
  shard_id,
  sequence_number,
  approximate_arrival_timestamp AS arrived_at
FROM (
  SELECT from_json(CAST(data AS STRING), 'page STRING, user_id BIGINT') AS parsed,
    shard_id, sequence_number, approximate_arrival_timestamp
  FROM STREAM read_kinesis(streamName => '${stream}', initialPosition => 'trim_horizon')
);
