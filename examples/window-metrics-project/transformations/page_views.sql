CREATE OR REFRESH STREAMING TABLE page_views
AS SELECT page, user_id, load_ms, event_time FROM STREAM read_files(
  '${landing}',
  format => 'json',
  schema => 'page STRING, user_id BIGINT, load_ms BIGINT, event_time TIMESTAMP'
);
