CREATE MATERIALIZED VIEW large_by_market AS
SELECT market, count(*) AS orders, sum(amount) AS total
FROM large_orders
GROUP BY market;

CREATE TEMPORARY VIEW large_orders AS
SELECT * FROM all_orders WHERE amount >= 100;
