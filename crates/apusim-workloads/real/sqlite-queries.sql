-- A small OLTP/analytics query set for recording sqlite3 under `apusim trace record`
-- (docs/workloads.md, "Real programs"): create tables, bulk inserts, an index, joins,
-- aggregates, an update and a delete, on an in-memory database. Deterministic: the data
-- come from recursive CTEs and integer arithmetic, not random().
CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, region INTEGER, balance REAL);
CREATE TABLE product(id INTEGER PRIMARY KEY, title TEXT, price REAL);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, product INTEGER,
                    qty INTEGER, day INTEGER);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000)
  INSERT INTO customer SELECT x, printf('customer-%05d', (x * 7919) % 2000), x % 16,
                              ((x * 104729) % 10000) / 100.0 FROM c;
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 500)
  INSERT INTO product SELECT x, printf('product-%04d', (x * 31) % 500),
                             1.0 + ((x * 7907) % 9000) / 100.0 FROM c;
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000)
  INSERT INTO orders SELECT x, 1 + (x * 4801) % 2000, 1 + (x * 211) % 500,
                            1 + x % 9, (x * 37) % 365 FROM c;
CREATE INDEX orders_customer ON orders(customer);
CREATE INDEX customer_name ON customer(name);
-- Joins and aggregates.
SELECT c.region, count(*), round(sum(o.qty * p.price), 2)
  FROM orders o JOIN customer c ON c.id = o.customer JOIN product p ON p.id = o.product
  GROUP BY c.region ORDER BY c.region;
SELECT c.name, sum(o.qty) AS n FROM customer c JOIN orders o ON o.customer = c.id
  WHERE c.region = 3 GROUP BY c.id ORDER BY n DESC, c.name LIMIT 5;
SELECT p.title, count(DISTINCT o.customer) FROM product p JOIN orders o ON o.product = p.id
  WHERE o.day BETWEEN 100 AND 130 GROUP BY p.id ORDER BY 2 DESC, p.title LIMIT 5;
SELECT count(*) FROM customer WHERE name LIKE 'customer-01%';
-- An update through the index and a delete.
UPDATE customer SET balance = balance - 10.0
  WHERE id IN (SELECT customer FROM orders WHERE qty = 9);
DELETE FROM orders WHERE day > 300;
SELECT count(*), round(avg(balance), 3) FROM customer;
SELECT count(*), sum(qty) FROM orders;
