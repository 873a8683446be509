"""Trust under hostile and careless use: a user with no rights meets 1142/1044
on every statement kind that can reach a table, information_schema and SHOW
show only what the user may see, and DDL waits for the transactions that use
a table (metadata locks), with what was acknowledged surviving kill -9.

Runs against lockstep only: MariaDB differs in some codes and listings."""

import threading
import time

import pymysql
import pytest

from lockstep_server import TARGET, code_of

pytestmark = pytest.mark.skipif(TARGET != "lockstep", reason="lockstep semantics")


def run(conn, sql, args=None):
    with conn.cursor() as c:
        c.execute(sql, args)
        return c.fetchall()


@pytest.fixture
def nobody(server, db):
    """A user with USAGE only (and rights on a database of its own), plus a
    table `secret` in the test database that it must never reach."""
    user, own = f"n_{db}"[:32], f"own_{db}"[:64]
    server.sql(f"CREATE TABLE `{db}`.secret (id INT PRIMARY KEY, s VARCHAR(20))")
    server.sql(f"INSERT INTO `{db}`.secret VALUES (1, 'hidden')")
    server.sql(f"CREATE TRIGGER `{db}`.secret_bi BEFORE INSERT ON `{db}`.secret "
               "FOR EACH ROW SET NEW.s = 'hidden'")
    server.sql(f"CREATE PROCEDURE `{db}`.secret_p() SELECT 'hidden'")
    server.sql(f"CREATE FUNCTION `{db}`.secret_f() RETURNS INT RETURN 1")
    server.sql(f"CREATE DATABASE `{own}`")
    server.sql(f"CREATE TABLE `{own}`.mine (id INT PRIMARY KEY, v INT)")
    server.sql(f"DROP USER IF EXISTS {user}")
    server.sql(f"CREATE USER {user} IDENTIFIED BY 'pw'")
    server.sql(f"GRANT ALL ON `{own}`.* TO {user}")
    conn = server.connect(db=own, user=user, password="pw")
    yield conn, db, own, user
    conn.close()
    server.sql(f"DROP USER IF EXISTS {user}")
    server.sql(f"DROP DATABASE IF EXISTS `{own}`")


# Every statement kind that can name a table, each reaching `secret`.
# {d}: the database holding it. Expected: 1142 (table) or 1044 (database).
DENIED = [
    ("SELECT * FROM {d}.secret", 1142),
    ("SELECT (SELECT s FROM {d}.secret LIMIT 1)", 1142),
    ("SELECT * FROM mine WHERE id IN (SELECT id FROM {d}.secret)", 1142),
    ("SELECT * FROM mine WHERE EXISTS (SELECT 1 FROM {d}.secret)", 1142),
    ("SELECT * FROM (SELECT * FROM {d}.secret) x", 1142),
    ("SELECT * FROM mine JOIN {d}.secret ON 1=1", 1142),
    ("SELECT id FROM mine UNION SELECT id FROM {d}.secret", 1142),
    ("SELECT * FROM mine ORDER BY (SELECT s FROM {d}.secret LIMIT 1)", 1142),
    ("SELECT * FROM mine GROUP BY id HAVING id > (SELECT MIN(id) FROM {d}.secret)", 1142),
    ("SELECT s FROM {d}.secret FOR UPDATE", 1142),
    ("WITH c AS (SELECT * FROM {d}.secret) SELECT * FROM c", 1142),
    ("WITH c AS (SELECT 1 AS x) SELECT * FROM c JOIN {d}.secret", 1142),
    ("SET @x = (SELECT s FROM {d}.secret LIMIT 1)", 1142),
    ("SET @x = (SELECT s FROM {d}.secret LIMIT 1 FOR UPDATE)", 1142),
    ("SET @@session.sql_select_limit = (SELECT id FROM {d}.secret)", 1142),
    ("DO (SELECT s FROM {d}.secret LIMIT 1)", 1142),
    ("EXPLAIN SELECT * FROM {d}.secret", 1142),
    ("INSERT INTO mine SELECT id, 1 FROM {d}.secret", 1142),
    ("INSERT INTO mine VALUES ((SELECT id FROM {d}.secret LIMIT 1), 1)", 1142),
    ("INSERT INTO {d}.secret VALUES (2, 'x')", 1142),
    ("REPLACE INTO {d}.secret VALUES (1, 'x')", 1142),
    ("UPDATE {d}.secret SET s = 'x'", 1142),
    ("UPDATE mine SET v = (SELECT id FROM {d}.secret LIMIT 1)", 1142),
    ("DELETE FROM {d}.secret", 1142),
    ("DELETE FROM mine WHERE id IN (SELECT id FROM {d}.secret)", 1142),
    ("TRUNCATE TABLE {d}.secret", 1142),
    ("DROP TABLE {d}.secret", 1142),
    ("CREATE INDEX i ON {d}.secret (s)", 1142),
    ("DROP INDEX i ON {d}.secret", 1142),
    ("ALTER TABLE {d}.secret ADD INDEX i (s)", 1142),
    ("CREATE TABLE {d}.copy LIKE {d}.secret", 1142),
    ("CREATE TABLE mine2 LIKE {d}.secret", 1142),
    ("SHOW CREATE TABLE {d}.secret", 1142),
    ("SHOW COLUMNS FROM {d}.secret", 1142),
    ("SHOW INDEX FROM {d}.secret", 1142),
    ("DESCRIBE {d}.secret", 1142),
    ("SHOW TABLES FROM {d}", 1044),
    ("SHOW TABLE STATUS FROM {d}", 1044),
    ("SHOW CREATE DATABASE {d}", 1044),
    ("USE {d}", 1044),
    ("CREATE DATABASE {d}_new", 1044),
    ("DROP DATABASE {d}", 1044),
    ("GRANT SELECT ON {d}.secret TO {u}", 1142),
    ("GRANT SELECT ON {d}.* TO {u}", 1044),
    # Stored programs' text: TRIGGER on the table; a routine the user has
    # no right on does not exist for it (MySQL 8).
    ("SHOW CREATE TRIGGER {d}.secret_bi", 1142),
    ("SHOW CREATE PROCEDURE {d}.secret_p", 1305),
    ("SHOW CREATE FUNCTION {d}.secret_f", 1305),
    ("CALL {d}.secret_p()", 1370),
]


def test_every_statement_kind_checks_privileges(nobody):
    conn, d, _own, user = nobody
    wrong = []
    for sql, want in DENIED:
        text = sql.format(d=d, u=user)
        got = code_of(lambda: run(conn, text))
        if got != want:
            wrong.append((text, got, want))
    assert not wrong, "\n".join(f"{t}: got {g}, want {w}" for t, g, w in wrong)
    # And nothing was changed or locked on the way.
    assert run(conn, "SELECT @x") == ((None,),)
    # A common table expression is no table: its name needs no grant.
    assert run(conn, "WITH secret AS (SELECT 1 AS x) SELECT x FROM secret") == ((1,),)


def test_system_schemas_are_not_writable(nobody, server):
    conn, _d, _own, _user = nobody
    for sql in ["INSERT INTO mysql.user VALUES (1)", "DELETE FROM sys.config",
                "UPDATE mysql.db SET x = 1", "TRUNCATE TABLE sys.config",
                "DROP TABLE mysql.user"]:
        assert code_of(lambda: run(conn, sql)) == 1142, sql
    for name in ["sys", "Mysql", "information_schema"]:
        assert code_of(lambda: server.sql(f"CREATE DATABASE {name}")) == 1007, name
    names = [r[0].lower() for r in run(conn, "SHOW DATABASES")]
    assert names.count("sys") == 1 and names.count("mysql") == 1


def test_information_schema_and_show_filter_by_privilege(nobody, server):
    conn, d, own, user = nobody
    schemas = {r[0] for r in run(conn, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA")}
    assert own in schemas and d not in schemas
    for view in ["TABLES", "COLUMNS", "STATISTICS"]:
        seen = {r[0] for r in run(conn, f"SELECT TABLE_SCHEMA FROM information_schema.{view}")}
        assert d not in seen, view
    assert {r[0] for r in run(conn, "SHOW DATABASES")} >= {own}
    assert d not in {r[0] for r in run(conn, "SHOW DATABASES")}
    for kind in ["PROCEDURE", "FUNCTION"]:
        assert not [r for r in run(conn, f"SHOW {kind} STATUS") if r[0] == d], kind
    assert run(conn, f"SHOW TRIGGERS FROM {d}") == ()
    # Threads: only its own without PROCESS.
    users = {r[0] for r in run(conn, "SELECT USER FROM information_schema.PROCESSLIST")}
    assert users == {user}
    assert {r[1] for r in run(conn, "SHOW PROCESSLIST")} == {user}


def test_show_create_database_escapes_backticks(server):
    name = "bt`x"
    server.sql("DROP DATABASE IF EXISTS `bt``x`")
    server.sql("CREATE DATABASE `bt``x`")
    try:
        conn = server.connect()
        text = run(conn, "SHOW CREATE DATABASE `bt``x`")[0][1]
        assert text.startswith("CREATE DATABASE `bt``x`"), text
        # SHOW GRANTS too: a dump of it cannot carry injected SQL.
        run(conn, "DROP USER IF EXISTS 'b`u'@'%'")
        run(conn, "CREATE USER 'b`u'@'%'")
        run(conn, "GRANT SELECT ON `bt``x`.* TO 'b`u'@'%'")
        grants = [r[0] for r in run(conn, "SHOW GRANTS FOR 'b`u'@'%'")]
        assert "GRANT SELECT ON `bt``x`.* TO `b``u`@`%`" in grants, grants
        run(conn, "DROP USER 'b`u'@'%'")
        conn.close()
    finally:
        server.sql("DROP DATABASE `bt``x`")
    assert name


def _in_thread(fn):
    out = {}

    def body():
        t = time.monotonic()
        try:
            out["result"] = fn()
        except pymysql.MySQLError as e:
            out["error"] = e.args[0]
        out["seconds"] = time.monotonic() - t

    th = threading.Thread(target=body, daemon=True)
    th.start()
    return th, out


@pytest.mark.parametrize("ddl", ["TRUNCATE TABLE m", "DROP TABLE m", "CREATE INDEX v ON m (v)"])
def test_ddl_waits_for_open_transactions(connect, ddl):
    a, b, c = connect(), connect(), connect()
    run(a, "CREATE TABLE m (id INT PRIMARY KEY, v INT)")
    run(a, "INSERT INTO m VALUES (1, 1), (2, 2)")
    run(a, "BEGIN")
    run(a, "INSERT INTO m VALUES (3, 3)")
    run(a, "UPDATE m SET v = 10 WHERE id = 1")
    th, out = _in_thread(lambda: run(b, ddl))
    time.sleep(0.5)
    assert th.is_alive(), f"{ddl} did not wait for the open transaction: {out}"
    # A new transaction queues behind the waiting DDL (no starvation) ...
    run(c, "SET SESSION lock_wait_timeout = 1")
    assert code_of(lambda: run(c, "SELECT * FROM m")) == 1205
    # ... while the open one goes on using the table.
    run(a, "INSERT INTO m VALUES (4, 4)")
    run(a, "COMMIT")
    th.join(30)
    assert not th.is_alive() and "error" not in out, out
    if ddl.startswith("TRUNCATE"):
        assert run(a, "SELECT COUNT(*) FROM m") == ((0,),)
    elif ddl.startswith("CREATE INDEX"):
        assert run(a, "SELECT COUNT(*) FROM m") == ((4,),)
        assert run(a, "SELECT id FROM m WHERE v = 10") == ((1,),)


def test_ddl_wait_ends_with_1205_or_kill(connect):
    a, b, k = connect(), connect(), connect()
    run(a, "CREATE TABLE m (id INT PRIMARY KEY)")
    run(a, "BEGIN")
    run(a, "SELECT * FROM m")
    run(b, "SET SESSION lock_wait_timeout = 1")
    t = time.monotonic()
    assert code_of(lambda: run(b, "DROP TABLE m")) == 1205
    assert 0.9 <= time.monotonic() - t < 5
    run(b, "SET SESSION lock_wait_timeout = 100")
    th, out = _in_thread(lambda: run(b, "DROP TABLE m"))
    time.sleep(0.3)
    run(k, f"KILL QUERY {b.thread_id()}")
    th.join(10)
    assert out.get("error") == 1317 and out["seconds"] < 2, out
    run(a, "COMMIT")
    run(b, "DROP TABLE m")


def test_truncate_after_commit_survives_kill9(server_factory):
    """The acknowledged order (transaction, then TRUNCATE after it) is what
    recovery rebuilds: the table is empty after kill -9, not refilled."""
    srv = server_factory("mdl_crash")
    a, b = srv.connect(), srv.connect()
    run(a, "CREATE DATABASE k")
    run(a, "CREATE TABLE k.t (id INT PRIMARY KEY, v INT)")
    run(a, "INSERT INTO k.t VALUES (1, 1), (2, 2)")
    run(a, "BEGIN")
    run(a, "INSERT INTO k.t VALUES (3, 3)")
    run(a, "UPDATE k.t SET v = 9 WHERE id = 1")
    th, out = _in_thread(lambda: run(b, "TRUNCATE TABLE k.t"))
    time.sleep(0.3)
    run(a, "COMMIT")
    th.join(30)
    assert "error" not in out, out
    run(a, "INSERT INTO k.t VALUES (7, 7)")
    srv.restart(crash=True)
    c = srv.connect()
    assert run(c, "SELECT id, v FROM k.t") == ((7, 7),)


def test_kill_query_and_max_execution_time_stop_a_long_select(connect):
    a, k = connect(), connect()
    run(a, "CREATE TABLE big (id INT PRIMARY KEY, k INT)")
    rows = ",".join(f"({i}, {i % 7})" for i in range(4000))
    run(a, f"INSERT INTO big VALUES {rows}")
    # Every row triple is visited: no order or index makes it cheap.
    slow = "SELECT COUNT(*) FROM big x, big y, big z WHERE x.k + y.k + z.k < 0"
    th, out = _in_thread(lambda: run(a, slow))
    time.sleep(0.3)
    assert th.is_alive(), out
    run(k, f"KILL QUERY {a.thread_id()}")
    th.join(10)
    assert out.get("error") == 1317 and out["seconds"] < 1.5, out
    # The connection goes on; the next statements run normally.
    assert run(a, "SELECT COUNT(*) FROM big") == ((4000,),)
    t = time.monotonic()
    assert code_of(lambda: run(a, slow.replace("SELECT", "SELECT /*+ MAX_EXECUTION_TIME(200) */", 1))) == 3024
    run(a, "SET SESSION max_execution_time = 200")
    assert code_of(lambda: run(a, slow)) == 3024
    assert time.monotonic() - t < 3
    # SLEEP ends early when killed, returning 1 as in MySQL.
    run(a, "SET SESSION max_execution_time = 0")
    th, out = _in_thread(lambda: run(a, "SELECT SLEEP(5)"))
    time.sleep(0.3)
    run(k, f"KILL QUERY {a.thread_id()}")
    th.join(10)
    assert out["seconds"] < 1.5, out


def test_memory_budget_refuses_growth_and_keeps_the_server_up(server_factory):
    """Past 90% of --memory-budget writes that add data get 1114, statements
    past the whole budget 3170; deleting still works and frees room; the
    data that is there survives a restart."""
    srv = server_factory("budget", extra_args=["--memory-budget", str(300 << 20)])
    a, b = srv.connect(), srv.connect()
    run(a, "CREATE DATABASE mb")
    run(a, "CREATE TABLE mb.t (id INT PRIMARY KEY, s LONGTEXT)")
    full = None
    for i in range(200):
        full = code_of(lambda: run(a, f"INSERT INTO mb.t VALUES ({i}, REPEAT('x', 4000000))"))
        if full:
            break
    assert full == 1114, full
    stored = run(a, "SELECT COUNT(*) FROM mb.t")[0][0]
    assert 30 < stored < 75, stored
    # Old versions are data too: an old snapshot pins them.
    run(b, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    run(b, "BEGIN")
    run(b, "SELECT COUNT(*) FROM mb.t")
    assert code_of(lambda: run(a, "UPDATE mb.t SET s = REPEAT('y', 4000000) WHERE id = 0")) == 1114
    run(b, "COMMIT")
    # A statement that buffers past the budget gets 3170, not the OOM killer.
    assert code_of(lambda: run(a, "SELECT s FROM mb.t UNION ALL SELECT s FROM mb.t")) in (3170, 1041)
    # A plain scan streams: it is sent in batches that fit.
    assert len(run(a, "SELECT s FROM mb.t ORDER BY id")) == stored
    status = dict(run(a, "SHOW GLOBAL STATUS LIKE 'Lockstep_memory%'"))
    assert int(status["Lockstep_memory_in_use"]) < int(status["Lockstep_memory_budget"]) * 1.2
    # Deleting works and gives the room back (after purge).
    run(a, "DELETE FROM mb.t WHERE id < 20")
    deadline = time.monotonic() + 10
    while code_of(lambda: run(a, "INSERT INTO mb.t VALUES (1000, REPEAT('z', 4000000))")):
        assert time.monotonic() < deadline, "deleted rows never freed their memory"
        time.sleep(0.2)
    left = run(a, "SELECT COUNT(*) FROM mb.t")[0][0]
    srv.restart(crash=True)
    assert run(srv.connect(), "SELECT COUNT(*) FROM mb.t")[0][0] == left


def test_max_prepared_stmt_count(server):
    import mysql_binary
    conn = server.connect()
    run(conn, "SET GLOBAL max_prepared_stmt_count = 10")
    try:
        client = server.connect()
        stmts = [mysql_binary.prepare(client, f"SELECT {i}") for i in range(10)]
        assert code_of(lambda: mysql_binary.prepare(client, "SELECT 11")) == 1461
        status = dict(run(conn, "SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'"))
        assert status["Prepared_stmt_count"] == "10"
        mysql_binary.close(stmts[0])
        assert mysql_binary.execute(mysql_binary.prepare(client, "SELECT 12")) == [(12,)]
        client.close()
        time.sleep(0.3)
        status = dict(run(conn, "SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'"))
        assert status["Prepared_stmt_count"] == "0"
    finally:
        run(conn, "SET GLOBAL max_prepared_stmt_count = 16382")


def test_current_user_is_the_account(nobody):
    conn, _d, _own, user = nobody
    current, login = run(conn, "SELECT CURRENT_USER(), USER()")[0]
    assert current == f"{user}@%", current
    assert login.startswith(f"{user}@") and login != current, login


def test_a_query_stops_when_its_client_goes_away(server, connect):
    import subprocess
    a = connect()
    db = run(a, "SELECT DATABASE()")[0][0]
    run(a, "CREATE TABLE big2 (id INT PRIMARY KEY, k INT)")
    rows = ",".join(f"({i}, {i % 7})" for i in range(4000))
    run(a, f"INSERT INTO big2 VALUES {rows}")
    slow = "SELECT COUNT(*) FROM big2 x, big2 y, big2 z WHERE x.k + y.k + z.k < 0"
    client = subprocess.Popen(server.cli_args() + [db, "-e", slow],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def running():
        return [r for r in run(a, "SHOW FULL PROCESSLIST") if r[7] and "big2 x" in r[7]]

    deadline = time.monotonic() + 10
    while not running():
        assert time.monotonic() < deadline, "the query never started"
        time.sleep(0.05)
    client.kill()
    client.wait()
    gone = time.monotonic()
    while running():
        assert time.monotonic() - gone < 2, "the query outlived its client"
        time.sleep(0.05)
