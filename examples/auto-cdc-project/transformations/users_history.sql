CREATE OR REFRESH STREAMING TABLE users_history;

CREATE FLOW users_history_cdc AS AUTO CDC INTO users_history
FROM STREAM(users_changes)
KEYS (userId)
APPLY AS DELETE WHEN operation = 'DELETE'
SEQUENCE BY sequenceNum
COLUMNS * EXCEPT (operation, sequenceNum)
STORED AS SCD TYPE 2;
