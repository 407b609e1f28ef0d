CREATE OR REFRESH STREAMING TABLE all_orders;

CREATE FLOW us_orders AS INSERT INTO all_orders BY NAME
SELECT id, amount, 'US' AS market
FROM STREAM read_files('${landing}/us', format => 'json', schema => 'id BIGINT, amount DOUBLE');

CREATE FLOW eu_orders AS INSERT INTO all_orders BY NAME
SELECT id, amount, 'EU' AS market
FROM STREAM read_files('${landing}/eu', format => 'json', schema => 'id BIGINT, amount DOUBLE');
