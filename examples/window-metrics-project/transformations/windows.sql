-- A window's row is appended once, when the watermark (the newest event time seen minus 5 minutes)
-- passes its end; a view older than the watermark is dropped and counted.
CREATE OR REFRESH STREAMING TABLE page_views_10m
AS SELECT window.start AS window_start, window.end AS window_end, page,
  count(*) AS views, count(DISTINCT user_id) AS visitors,
  avg(load_ms) AS avg_load_ms, max(load_ms) AS max_load_ms
FROM STREAM(page_views) WATERMARK event_time DELAY OF INTERVAL 5 MINUTES
GROUP BY window(event_time, '10 minutes'), page;

-- A moving count: 10-minute windows sliding by 5; the selected window is a struct {start, end}.
CREATE OR REFRESH STREAMING TABLE page_views_moving
AS SELECT window, count(*) AS views, sum(load_ms) AS total_load_ms
FROM STREAM(page_views) WATERMARK event_time DELAY OF INTERVAL 5 MINUTES
GROUP BY window(event_time, '10 minutes', '5 minutes');
