"""Users and privileges: CREATE/ALTER/DROP USER, SET PASSWORD, GRANT/REVOKE at
global, database and table level, SHOW GRANTS, the errors of missing
privileges (1142/1044/1227/1095) and of bad logins (1045), and that accounts
survive a clean restart and a kill -9.

Users are created on the shared server with names unique to each test and
dropped at the end."""

import re
import subprocess

import pytest

import mysql_binary
from lockstep_server import HOST, TARGET, code_of

pytestmark = pytest.mark.skipif(TARGET != "lockstep", reason="lockstep accounts")


def run(conn, sql):
    with conn.cursor() as c:
        c.execute(sql)
        return c.fetchall()


def login(server, user, password, db=None, **kw):
    return server.connect(db=db, user=user, password=password, **kw)


def cli_as(server, user, password, sql, db=None, args=()):
    """The mariadb client as `user`; returns (returncode, stdout, stderr)."""
    cmd = ["mariadb", "--no-defaults", f"-h{HOST}", f"-P{server.port}", f"-u{user}",
           f"-p{password}", "--protocol=TCP", "--connect-timeout=10", "--batch", *args]
    if db:
        cmd.append(db)
    r = subprocess.run(cmd, input=sql, capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


@pytest.fixture
def users(server):
    """users(name, ...) registers accounts to drop when the test ends."""
    made = []

    def add(*names):
        made.extend(names)
        return names[0] if len(names) == 1 else names

    yield add
    for n in made:
        try:
            server.sql(f"DROP USER IF EXISTS {n}")
        except Exception:
            pass


def test_levels_and_errors(server, db, users):
    reader, writer, admin = f"r_{db}"[:32], f"w_{db}"[:32], f"a_{db}"[:32]
    users(reader, f"'{writer}'@'localhost'", f"'{admin}'@'127.0.0.1'")
    server.sql(f"CREATE TABLE `{db}`.t (id INT PRIMARY KEY, v INT)")
    server.sql(f"CREATE TABLE `{db}`.secret (id INT PRIMARY KEY)")
    server.sql(f"INSERT INTO `{db}`.t VALUES (1, 10)")
    server.sql(f"CREATE USER '{reader}'@'%' IDENTIFIED WITH mysql_native_password BY 'rpw'")
    server.sql(f"CREATE USER '{writer}'@'localhost' IDENTIFIED BY 'wpw' "
               "WITH mysql_native_password")
    server.sql(f"CREATE USER '{admin}'@'127.0.0.1' IDENTIFIED BY 'apw'")
    server.sql(f"GRANT SELECT ON `{db}`.* TO '{reader}'@'%'")
    server.sql(f"GRANT SELECT, INSERT, UPDATE ON `{db}`.t TO '{writer}'@'localhost'")
    server.sql(f"GRANT PROCESS, SUPER, CREATE USER, RELOAD ON *.* TO '{admin}'@'127.0.0.1'")

    r = login(server, reader, "rpw", db)
    assert run(r, "SELECT v FROM t") == ((10,),)
    assert run(r, "SELECT COUNT(*) FROM secret") == ((0,),)
    assert code_of(lambda: run(r, "INSERT INTO t VALUES (2, 20)")) == 1142
    assert code_of(lambda: run(r, "DELETE FROM t")) == 1142
    assert code_of(lambda: run(r, "DROP TABLE t")) == 1142
    assert code_of(lambda: run(r, "CREATE DATABASE x_denied")) == 1044
    assert code_of(lambda: run(r, "USE mysql_nope")) == 1044
    assert code_of(lambda: run(r, "SET GLOBAL lockstep_throttle_limit = 5")) == 1227
    assert code_of(lambda: run(r, "CREATE USER zz")) == 1227
    assert code_of(lambda: run(r, "FLUSH PRIVILEGES")) == 1227
    assert code_of(lambda: run(r, f"GRANT SELECT ON `{db}`.* TO '{writer}'@'localhost'")) == 1044
    # Without PROCESS only its own threads are listed, and another user's
    # thread cannot be killed.
    root = server.connect()
    root_id = run(root, "SELECT CONNECTION_ID()")[0][0]
    ids = [row[0] for row in run(r, "SHOW PROCESSLIST")]
    assert root_id not in ids and run(r, "SELECT CONNECTION_ID()")[0][0] in ids
    assert code_of(lambda: run(r, f"KILL {root_id}")) == 1095
    # Subqueries and joins need SELECT on every table they read.
    w = login(server, writer, "wpw", db)
    run(w, "INSERT INTO t VALUES (2, 20)")
    run(w, "UPDATE t SET v = 21 WHERE id = 2")
    assert code_of(lambda: run(w, "SELECT * FROM t WHERE id IN (SELECT id FROM secret)")) == 1142
    assert code_of(lambda: run(w, "SELECT * FROM t JOIN secret USING (id)")) == 1142
    assert code_of(lambda: run(w, "DELETE FROM t WHERE id = 2")) == 1142
    assert code_of(lambda: run(w, "SELECT * FROM secret")) == 1142
    # COM_STMT_PREPARE is checked too, and SHOW lists only what is reachable.
    assert code_of(lambda: mysql_binary.prepare(w, "SELECT * FROM secret")) == 1142
    assert [row[0] for row in run(w, "SHOW TABLES")] == ["t"]
    system = {"information_schema", "mysql", "performance_schema", "sys"}
    assert set(row[0] for row in run(r, "SHOW DATABASES")) == system | {db}
    # The admin sees and may kill everyone.
    a = login(server, admin, "apw")
    assert root_id in [row[0] for row in run(a, "SHOW PROCESSLIST")]
    run(a, "FLUSH PRIVILEGES")
    run(a, "SET GLOBAL lockstep_throttle_limit = 128")
    assert code_of(lambda: run(a, f"SELECT * FROM `{db}`.t")) == 1142

    # SQLSTATEs as the mariadb client prints them.
    code, _, e = cli_as(server, reader, "rpw", "INSERT INTO t VALUES (3, 3);", db=db)
    assert code != 0 and "ERROR 1142 (42000)" in e, e
    assert f"INSERT command denied to user '{reader}'@'localhost' for table 't'" in e
    code, _, e = cli_as(server, reader, "rpw", "CREATE DATABASE nope;")
    assert "ERROR 1044 (42000)" in e, e
    code, _, e = cli_as(server, reader, "rpw", "SET GLOBAL lockstep_throttle_limit = 1;")
    assert "ERROR 1227 (42000)" in e, e
    code, out, e = cli_as(server, writer, "wpw", "SELECT v FROM t WHERE id = 2;", db=db)
    assert code == 0 and out.split() == ["v", "21"], e
    code, _, e = cli_as(server, reader, "wrong", "SELECT 1;")
    assert code != 0 and "ERROR 1045 (28000)" in e, e

    # Bad logins.
    assert code_of(lambda: login(server, reader, "nope")) == 1045
    assert code_of(lambda: login(server, "no_such_user_x", "")) == 1045
    # The writer exists for localhost only; 127.0.0.1 is a loopback peer.
    assert code_of(lambda: login(server, writer, "rpw")) == 1045
    # A database without any privilege is refused at connect time.
    assert code_of(lambda: login(server, reader, "rpw", "mysql_nope")) == 1044
    for c in (r, w, a, root):
        c.close()


def test_show_grants_and_revoke(server, db, users):
    u = users(f"g_{db}"[:32])
    server.sql(f"CREATE TABLE `{db}`.t (id INT PRIMARY KEY)")
    server.sql(f"CREATE USER {u} IDENTIFIED WITH mysql_native_password BY 'p'")
    server.sql(f"GRANT INSERT, SELECT ON `{db}`.* TO {u}")
    server.sql(f"GRANT DELETE ON `{db}`.t TO {u}")
    server.sql(f"GRANT ALL PRIVILEGES ON `{db}_all`.* TO {u} WITH GRANT OPTION")
    server.sql(f"GRANT PROCESS ON *.* TO {u}")
    expected = [
        f"GRANT PROCESS ON *.* TO `{u}`@`%`",
        f"GRANT SELECT, INSERT ON `{db}`.* TO `{u}`@`%`",
        f"GRANT ALL PRIVILEGES ON `{db}_all`.* TO `{u}`@`%` WITH GRANT OPTION",
        f"GRANT DELETE ON `{db}`.`t` TO `{u}`@`%`",
    ]
    rows = [r[0] for r in server.sql(f"SHOW GRANTS FOR '{u}'@'%'")]
    assert sorted(rows) == sorted(expected)
    assert rows[0] == expected[0]
    conn = login(server, u, "p", db)
    with conn.cursor() as c:
        c.execute("SHOW GRANTS")
        assert c.description[0][0] == f"Grants for {u}@%"
        assert sorted(r[0] for r in c.fetchall()) == sorted(expected)
    # Another user's grants need access to the mysql schema.
    assert code_of(lambda: run(conn, "SHOW GRANTS FOR root")) == 1044

    # REVOKE takes effect for the next statement of an open session, and at
    # EXECUTE of a statement prepared before.
    run(conn, "INSERT INTO t VALUES (1)")
    stmt = mysql_binary.prepare(conn, "SELECT id FROM t WHERE id = ?")
    assert mysql_binary.execute(stmt, 1) == [(1,)]
    server.sql(f"REVOKE INSERT ON `{db}`.* FROM {u}")
    assert code_of(lambda: run(conn, "INSERT INTO t VALUES (2)")) == 1142
    server.sql(f"REVOKE SELECT ON `{db}`.* FROM {u}")
    assert code_of(lambda: mysql_binary.execute(stmt, 1)) == 1142
    run(conn, "DELETE FROM t WHERE id = 1")
    server.sql(f"REVOKE DELETE ON `{db}`.t FROM {u}")
    assert code_of(lambda: run(conn, "DELETE FROM t")) == 1142
    assert code_of(lambda: server.sql(f"REVOKE DELETE ON `{db}`.t FROM {u}")) == 1147
    server.sql(f"REVOKE ALL PRIVILEGES, GRANT OPTION FROM {u}")
    assert [r[0] for r in server.sql(f"SHOW GRANTS FOR {u}")] == [f"GRANT USAGE ON *.* TO `{u}`@`%`"]

    # Grants that do not fit their level, and targets that do not exist.
    assert code_of(lambda: server.sql(f"GRANT SUPER ON `{db}`.* TO {u}")) == 1221
    assert code_of(lambda: server.sql(f"GRANT EXECUTE ON `{db}`.t TO {u}")) == 1144
    assert code_of(lambda: server.sql(f"GRANT SELECT ON `{db}`.missing TO {u}")) == 1146
    assert code_of(lambda: server.sql(f"GRANT SELECT ON *.* TO {u[:30]}_x")) == 1410
    # MySQL stores at most 32 characters of a user name.
    assert code_of(lambda: server.sql(f"GRANT SELECT ON *.* TO {'n' * 33}")) == 1470
    assert code_of(lambda: server.sql(f"CREATE USER {u}")) == 1396
    server.sql(f"CREATE USER IF NOT EXISTS {u}")
    assert code_of(lambda: server.sql("DROP USER root")) == 1396

    # Passwords: ALTER USER by an admin, SET PASSWORD by the user itself.
    server.sql(f"ALTER USER {u} IDENTIFIED BY 'p2'")
    assert code_of(lambda: login(server, u, "p")) == 1045
    c2 = login(server, u, "p2")
    run(c2, "SET PASSWORD = 'p3'")
    login(server, u, "p3").close()
    assert code_of(lambda: run(c2, "SET PASSWORD FOR root = 'x'")) == 1227

    # DROP USER: no new logins; the open session keeps no privileges.
    server.sql(f"GRANT SELECT ON `{db}`.* TO {u}")
    assert run(c2, f"SELECT COUNT(*) FROM `{db}`.t") == ((0,),)
    server.sql(f"DROP USER {u}")
    assert code_of(lambda: login(server, u, "p3")) == 1045
    assert code_of(lambda: run(c2, f"SELECT COUNT(*) FROM `{db}`.t")) == 1142
    assert code_of(lambda: server.sql(f"DROP USER {u}")) == 1396
    server.sql(f"DROP USER IF EXISTS {u}")
    for c in (conn, c2):
        c.close()


def test_most_specific_host_wins(server, users):
    u = users("spec_user")
    users("spec_user@localhost", "spec_user@'127.0.0.%'")
    server.sql(f"CREATE USER {u}@'%' IDENTIFIED WITH mysql_native_password BY 'any'")
    server.sql(f"CREATE USER {u}@'127.0.0.%' IDENTIFIED WITH mysql_native_password BY 'net'")
    assert run(login(server, u, "net"), "SELECT 1") == ((1,),)
    assert code_of(lambda: login(server, u, "any")) == 1045
    server.sql(f"CREATE USER {u}@localhost IDENTIFIED WITH mysql_native_password BY 'local'")
    assert run(login(server, u, "local"), "SELECT 1") == ((1,),)
    assert code_of(lambda: login(server, u, "net")) == 1045
    server.sql(f"DROP USER {u}@localhost")
    assert run(login(server, u, "net"), "SELECT 1") == ((1,),)


def test_root_is_unchanged(server):
    rows = [r[0] for r in server.sql("SHOW GRANTS")]
    assert len(rows) == 1 and rows[0].startswith("GRANT SELECT, INSERT, UPDATE, DELETE")
    assert rows[0].endswith("ON *.* TO `root`@`%` WITH GRANT OPTION")
    assert server.sql("SELECT CURRENT_USER()")[0][0].startswith("root@")


@pytest.mark.parametrize("crash", [False, True], ids=["clean", "kill9"])
def test_accounts_survive_restart(server_factory, crash):
    s = server_factory("accounts")
    s.sql("CREATE DATABASE app")
    s.sql("CREATE TABLE app.t (id INT PRIMARY KEY)")
    s.sql("CREATE USER alice IDENTIFIED WITH mysql_native_password BY 'a1'")
    s.sql("CREATE USER bob@localhost IDENTIFIED BY 'b1'")
    s.sql("CREATE USER carol IDENTIFIED BY 'c1'")
    s.sql("GRANT SELECT, INSERT ON app.* TO alice")
    s.sql("GRANT DELETE ON app.t TO bob@localhost WITH GRANT OPTION")
    s.sql("GRANT PROCESS ON *.* TO carol")
    s.sql("DROP USER carol")
    before = {u: sorted(r[0] for r in s.sql(f"SHOW GRANTS FOR {u}"))
              for u in ("alice", "bob@localhost")}
    s.restart(crash=crash)
    after = {u: sorted(r[0] for r in s.sql(f"SHOW GRANTS FOR {u}"))
             for u in ("alice", "bob@localhost")}
    assert after == before
    assert code_of(lambda: login(s, "carol", "c1")) == 1045
    a = login(s, "alice", "a1", "app")
    run(a, "INSERT INTO t VALUES (1)")
    assert code_of(lambda: run(a, "DELETE FROM t")) == 1142
    login(s, "bob", "b1").close()
    # More changes after the restart, then a checkpoint-backed restart.
    s.sql("ALTER USER alice IDENTIFIED BY 'a2'")
    s.sql("REVOKE INSERT ON app.* FROM alice")
    s.restart(crash=crash)
    assert code_of(lambda: login(s, "alice", "a1")) == 1045
    a = login(s, "alice", "a2", "app")
    assert code_of(lambda: run(a, "INSERT INTO t VALUES (2)")) == 1142
    assert run(a, "SELECT id FROM t") == ((1,),)
    if not crash:
        # A clean stop wrote a checkpoint; the log before it may be gone.
        log = open(s.log_path, errors="replace").read()
        assert re.search(r"loading checkpoint", log), log[-2000:]
