"""Joins and subqueries as users write them, on lockstep and MariaDB side
by side: the same data (customers 20k, products 10k, orders 200k, items
100k) and the same queries, best of 3, results compared.

    python3 bench/optimizer_probe.py load PORT      # each server
    python3 bench/optimizer_probe.py run LOCKSTEP_PORT MARIADB_PORT [names]
    python3 bench/optimizer_probe.py rounds N LOCKSTEP_PORT MARIADB_PORT [names]

`rounds` runs both servers N times in turn (each query best of 3 on
each) and prints the median of each round's same-run ratio, which a
shared machine's load moves less than either time alone.
"""
import sys, time, pymysql

def conn(port, db=None):
    return pymysql.connect(host='127.0.0.1', port=port, user='root', password='', database=db, autocommit=True)

N_CUST, N_ORD, N_ITEM, N_PROD = 20000, 200000, 100000, 10000

def rnd(i, m, salt):
    return (i * 2654435761 + salt * 40503) % 4294967296 % m

def load(port):
    c = conn(port); cur = c.cursor()
    cur.execute("DROP DATABASE IF EXISTS probe"); cur.execute("CREATE DATABASE probe"); cur.execute("USE probe")
    cur.execute("CREATE TABLE customers (id INT PRIMARY KEY, region INT NOT NULL, name VARCHAR(30), KEY k_region (region))")
    cur.execute("CREATE TABLE products (id INT PRIMARY KEY, category INT NOT NULL, price INT)")
    cur.execute("CREATE TABLE orders (id INT PRIMARY KEY, cust_id INT NOT NULL, amount INT, created DATE, KEY k_cust (cust_id), KEY k_created (created))")
    cur.execute("CREATE TABLE items (id INT PRIMARY KEY, order_id INT NOT NULL, product_id INT NOT NULL, qty INT, KEY k_order (order_id))")
    def batch(table, rows):
        for s in range(0, len(rows), 2000):
            part = rows[s:s+2000]
            cur.execute(f"INSERT INTO {table} VALUES " + ",".join("(" + ",".join(repr(v) for v in r) + ")" for r in part))
    batch("customers", [(i, rnd(i, 50, 1), f"cust{i}") for i in range(1, N_CUST+1)])
    batch("products", [(i, rnd(i, 100, 2), rnd(i, 1000, 3)) for i in range(1, N_PROD+1)])
    import datetime
    base = datetime.date(2020, 1, 1)
    batch("orders", [(i, rnd(i, N_CUST, 4) + 1, rnd(i, 10000, 5), str(base + datetime.timedelta(days=rnd(i, 1500, 6)))) for i in range(1, N_ORD+1)])
    batch("items", [(i, rnd(i, N_ORD, 7) + 1, rnd(i, N_PROD, 8) + 1, rnd(i, 10, 9) + 1) for i in range(1, N_ITEM+1)])
    cur.execute("ANALYZE TABLE customers, products, orders, items")
    cur.fetchall()

QUERIES = {
 "comma3": "SELECT COUNT(*), SUM(i.qty) FROM items i, orders o, customers c WHERE i.order_id = o.id AND o.cust_id = c.id AND c.region = 3",
 "join3_rev": "SELECT COUNT(*), SUM(i.qty) FROM customers c JOIN orders o ON o.cust_id = c.id JOIN items i ON i.order_id = o.id WHERE c.region = 3",
 "join3_on": "SELECT COUNT(*), SUM(i.qty) FROM items i JOIN orders o ON i.order_id = o.id JOIN customers c ON o.cust_id = c.id AND c.region = 3",
 "join4": "SELECT COUNT(*), SUM(p.price * i.qty) FROM products p, items i, orders o, customers c WHERE p.id = i.product_id AND i.order_id = o.id AND o.cust_id = c.id AND p.category = 7 AND c.region < 5",
 "join5_self": "SELECT COUNT(*) FROM customers c JOIN orders o ON o.cust_id = c.id JOIN items i ON i.order_id = o.id JOIN products p ON p.id = i.product_id JOIN customers c2 ON c2.id = c.id + 1 WHERE p.category = 7 AND c2.region = 4",
 "in_sub": "SELECT COUNT(*), SUM(amount) FROM orders WHERE cust_id IN (SELECT id FROM customers WHERE region = 3)",
 "exists_sub": "SELECT COUNT(*), SUM(amount) FROM orders o WHERE EXISTS (SELECT 1 FROM customers c WHERE c.id = o.cust_id AND c.region = 3)",
 "join_for_in": "SELECT COUNT(*), SUM(o.amount) FROM customers c JOIN orders o ON o.cust_id = c.id WHERE c.region = 3",
 "in_big": "SELECT COUNT(*) FROM customers WHERE id IN (SELECT cust_id FROM orders WHERE amount > 9990)",
 "not_exists": "SELECT COUNT(*) FROM customers c WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.cust_id = c.id)",
 "not_in": "SELECT COUNT(*) FROM products WHERE id NOT IN (SELECT product_id FROM items)",
 "derived_group": "SELECT c.region, COUNT(*), SUM(t.total) FROM customers c JOIN (SELECT cust_id, SUM(amount) AS total FROM orders GROUP BY cust_id) t ON t.cust_id = c.id GROUP BY c.region ORDER BY c.region LIMIT 5",
 "derived_group_filter": "SELECT COUNT(*), SUM(t.total) FROM (SELECT cust_id, SUM(amount) AS total FROM orders GROUP BY cust_id) t, customers c WHERE t.cust_id = c.id AND c.region = 3",
 "derived_max_back": "SELECT COUNT(*), SUM(o.amount) FROM orders o JOIN (SELECT cust_id, MAX(created) AS mc FROM orders GROUP BY cust_id) m ON m.cust_id = o.cust_id AND m.mc = o.created",
 "scalar_select": "SELECT SUM(x) FROM (SELECT c.id, (SELECT SUM(amount) FROM orders o WHERE o.cust_id = c.id) AS x FROM customers c WHERE c.region = 3) s",
 "scalar_where": "SELECT COUNT(*) FROM customers c WHERE (SELECT COUNT(*) FROM orders o WHERE o.cust_id = c.id) > 14",
 "scalar_where_max": "SELECT COUNT(*) FROM orders o WHERE o.amount = (SELECT MAX(o2.amount) FROM orders o2 WHERE o2.cust_id = o.cust_id)",
 "order_limit_join": "SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.cust_id ORDER BY o.created DESC, o.id DESC LIMIT 10",
 "order_limit_filtered": "SELECT o.id FROM customers c JOIN orders o ON o.cust_id = c.id WHERE c.region = 3 ORDER BY o.id LIMIT 10",
 "order_limit_pk": "SELECT o.id, c.region FROM orders o, customers c WHERE c.id = o.cust_id ORDER BY o.id DESC LIMIT 10",
 "range_join": "SELECT COUNT(*), SUM(c.region) FROM orders o JOIN customers c ON c.id = o.cust_id WHERE o.created BETWEEN '2021-03-01' AND '2021-03-03'",
 "range_wide": "SELECT COUNT(*), SUM(amount) FROM orders WHERE created > '2020-02-01'",
 "group_join": "SELECT c.region, COUNT(*) FROM orders o JOIN customers c ON c.id = o.cust_id WHERE o.amount > 9900 GROUP BY c.region ORDER BY 2 DESC, 1 LIMIT 3",
 "left_join_null": "SELECT COUNT(*) FROM customers c LEFT JOIN orders o ON o.cust_id = c.id WHERE o.id IS NULL",
 "derived_group_point": "SELECT c.name, d.total FROM customers c JOIN (SELECT cust_id, SUM(amount) AS total FROM orders GROUP BY cust_id) d ON d.cust_id = c.id WHERE c.id = 5",
 "derived_group_const": "SELECT * FROM (SELECT cust_id, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY cust_id) d WHERE d.cust_id = 77",
}

def run(port, names, reps):
    c = conn(port, "probe"); cur = c.cursor()
    out = {}
    for name in names:
        sql = QUERIES[name]
        best = None; rows = None
        for _ in range(reps):
            t = time.perf_counter()
            cur.execute(sql); rows = cur.fetchall()
            d = time.perf_counter() - t
            best = d if best is None else min(best, d)
            if d > 20: break
        out[name] = (best, rows)
    return out

def same(rowa, rowb):
    return [tuple(str(x) for x in r) for r in rowa] == [tuple(str(x) for x in r) for r in rowb]

def rounds(n, a, b, names):
    import statistics
    ratios = {name: [] for name in names}
    times = {name: ([], []) for name in names}
    for _ in range(n):
        ra = run(a, names, 3); rb = run(b, names, 3)
        for name in names:
            (ta, rowa), (tb, rowb) = ra[name], rb[name]
            if not same(rowa, rowb):
                print(f"{name}: DIFF {rowa[:3]} vs {rowb[:3]}")
            ratios[name].append(ta / tb)
            times[name][0].append(ta); times[name][1].append(tb)
    for name in names:
        ta, tb = (statistics.median(t) * 1000 for t in times[name])
        print(f"{name:22s} lockstep {ta:9.1f} ms  mariadb {tb:9.1f} ms  median ratio {statistics.median(ratios[name]):6.2f}  (rounds: {' '.join(f'{r:.2f}' for r in ratios[name])})")

if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "load":
        load(int(sys.argv[2]))
    elif mode == "rounds":
        n, a, b = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
        rounds(n, a, b, sys.argv[5:] or list(QUERIES))
    else:
        a, b = int(sys.argv[2]), int(sys.argv[3])
        names = sys.argv[4:] or list(QUERIES)
        ra = run(a, names, 3); rb = run(b, names, 3)
        for n in names:
            ta, rowa = ra[n]; tb, rowb = rb[n]
            ok = same(rowa, rowb)
            print(f"{n:22s} lockstep {ta*1000:9.1f} ms  mariadb {tb*1000:9.1f} ms  ratio {ta/tb:7.1f}  {'same' if ok else 'DIFF ' + str(rowa[:3]) + ' vs ' + str(rowb[:3])}")
