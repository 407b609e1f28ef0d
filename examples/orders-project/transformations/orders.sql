-- Raw orders as they land, then cleaned: amounts in currency units, regions in upper case.
CREATE OR REFRESH STREAMING TABLE raw_orders
COMMENT 'Orders as they land'
AS SELECT * FROM STREAM read_files(
  '${landing}',
  format => 'json',
  schema => 'id BIGINT, amount_cents BIGINT, region STRING'
);

CREATE OR REFRESH STREAMING TABLE orders (
  CONSTRAINT valid_id EXPECT (id IS NOT NULL) ON VIOLATION DROP ROW
)
AS SELECT id, CAST(amount_cents AS DOUBLE) / 100 AS amount, upper(region) AS region
FROM STREAM(raw_orders);
