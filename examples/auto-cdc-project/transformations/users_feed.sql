-- The change feed as it lands: one JSON object per change, ordered by sequenceNum.
CREATE TEMPORARY VIEW users_feed AS
SELECT * FROM STREAM read_files(
  '${landing}',
  format => 'json',
  schema => 'userId BIGINT, name STRING, city STRING, operation STRING, sequenceNum BIGINT'
);

-- The history keeps no truncates (a truncate would erase the history it keeps).
CREATE TEMPORARY VIEW users_changes AS
SELECT * FROM STREAM(users_feed) WHERE operation <> 'TRUNCATE';
