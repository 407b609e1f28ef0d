CREATE OR REFRESH STREAMING TABLE users_current
TBLPROPERTIES ('pipelines.cdc.tombstoneGCThresholdInSeconds' = '172800');

CREATE FLOW users_current_cdc AS AUTO CDC INTO users_current
FROM STREAM(users_feed)
KEYS (userId)
APPLY AS DELETE WHEN operation = 'DELETE'
APPLY AS TRUNCATE WHEN operation = 'TRUNCATE'
SEQUENCE BY sequenceNum
COLUMNS * EXCEPT (operation, sequenceNum)
STORED AS SCD TYPE 1;
