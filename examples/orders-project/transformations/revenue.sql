-- Files are read in any order: this one reads a table another file defines.
CREATE MATERIALIZED VIEW revenue_by_region (
  CONSTRAINT has_orders EXPECT (orders > 0)
)
COMMENT 'Orders and revenue per region'
AS SELECT region, count(*) AS orders, round(sum(amount), 2) AS revenue
FROM orders
GROUP BY region;
