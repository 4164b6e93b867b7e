-- The SQLite workload of bench/patch-compare.sh (sqlite3 :memory: < this):
-- a table of 2000 rows built in a transaction, an index, and queries that
-- scan, sort, group and join.
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
INSERT INTO t SELECT i, printf('row%05d', i * 7 % 2000), i * 1.5 FROM n;
COMMIT;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(c) FROM t WHERE b LIKE 'row01%';
SELECT b, a FROM t WHERE b > 'row01990' ORDER BY b LIMIT 5;
SELECT a % 7 AS k, count(*), avg(c) FROM t GROUP BY k ORDER BY k;
SELECT x.a, y.a FROM t x JOIN t y ON y.a = x.a * 2 WHERE x.a < 5;
