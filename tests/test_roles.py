"""MySQL 8 roles over the wire: a user with a role logs in, holds the role's
privileges only once it is active (SET ROLE, a default role, or
activate_all_roles_on_login), loses them when the role is revoked or dropped
(at its next statement, from another connection), a role cannot log in, a
role granted through another role counts, and roles, their grants and
default roles survive a clean restart and a kill -9.

Accounts are named after the test and dropped at the end."""

import re

import pytest

from lockstep_server import TARGET, code_of

pytestmark = pytest.mark.skipif(TARGET != "lockstep", reason="MySQL 8 roles")


def run(conn, sql):
    with conn.cursor() as c:
        c.execute(sql)
        return c.fetchall()


def login(server, user, password, db=None):
    return server.connect(db=db, user=user, password=password)


@pytest.fixture
def names(server, db):
    """Unique account names for this test; all dropped at the end."""
    made = []

    def make(*stems):
        out = [f"{s}_{db}"[:32] for s in stems]
        made.extend(out)
        return out

    yield make
    # Roles and users alike, in one statement (DROP USER takes roles).
    server.sql("DROP USER IF EXISTS " + ", ".join(f"`{n}`" for n in made))


def test_role_privileges_follow_set_role_and_revoke(server, db, names):
    reader, writer, user = names("rr", "rw", "u")
    server.sql(f"CREATE TABLE `{db}`.t (id INT PRIMARY KEY, v INT)")
    server.sql(f"INSERT INTO `{db}`.t VALUES (1, 10)")
    server.sql(f"CREATE ROLE `{reader}`, `{writer}`")
    server.sql(f"GRANT SELECT ON `{db}`.t TO `{reader}`")
    server.sql(f"GRANT INSERT ON `{db}`.* TO `{writer}`")
    server.sql(f"CREATE USER `{user}` IDENTIFIED BY 'pw'")
    server.sql(f"GRANT `{reader}`, `{writer}` TO `{user}`")

    # A role is a locked account: no login, whatever the password.
    assert code_of(lambda: login(server, reader, "")) == 3118

    u = login(server, user, "pw")
    assert run(u, "SELECT CURRENT_ROLE()") == (("NONE",),)
    assert code_of(lambda: run(u, f"SELECT v FROM `{db}`.t")) == 1142
    run(u, f"SET ROLE `{reader}`")
    assert run(u, f"SELECT v FROM `{db}`.t") == ((10,),)
    assert code_of(lambda: run(u, f"INSERT INTO `{db}`.t VALUES (2, 20)")) == 1142
    run(u, "SET ROLE ALL")
    run(u, f"INSERT INTO `{db}`.t VALUES (2, 20)")
    assert run(u, "SELECT CURRENT_ROLE()") == (
        (",".join(sorted(f"`{r}`@`%`" for r in (reader, writer))),),)

    # Another connection revokes: gone at this session's next statement.
    server.sql(f"REVOKE `{reader}` FROM `{user}`")
    assert code_of(lambda: run(u, f"SELECT v FROM `{db}`.t")) == 1142
    run(u, f"INSERT INTO `{db}`.t VALUES (3, 30)")
    assert code_of(lambda: run(u, f"SET ROLE `{reader}`")) == 3530

    # Default roles are active at the next login.
    server.sql(f"SET DEFAULT ROLE `{writer}` TO `{user}`")
    u2 = login(server, user, "pw", db)
    assert run(u2, "SELECT CURRENT_ROLE()") == ((f"`{writer}`@`%`",),)
    run(u2, "INSERT INTO t VALUES (4, 40)")

    # DROP ROLE while the role is active elsewhere.
    server.sql(f"DROP ROLE `{writer}`")
    assert code_of(lambda: run(u2, "INSERT INTO t VALUES (5, 50)")) == 1142
    assert run(u2, "SELECT CURRENT_ROLE()") == (("NONE",),)
    u.close()
    u2.close()


def test_role_through_role_and_a_user_with_nothing(server, db, names):
    inner, outer, user, bare = names("ri", "ro", "u", "bare")
    server.sql(f"CREATE TABLE `{db}`.t (id INT PRIMARY KEY)")
    server.sql(f"CREATE ROLE `{inner}`, `{outer}`")
    server.sql(f"GRANT SELECT ON `{db}`.* TO `{inner}`")
    server.sql(f"GRANT `{inner}` TO `{outer}`")
    # No loops between roles (MySQL's 4027).
    assert code_of(lambda: server.sql(f"GRANT `{outer}` TO `{inner}`")) == 4027
    server.sql(f"CREATE USER `{user}` IDENTIFIED BY 'pw', `{bare}` IDENTIFIED BY 'pw'")
    server.sql(f"GRANT `{outer}` TO `{user}`")
    server.sql(f"ALTER USER `{user}` DEFAULT ROLE `{outer}`")
    u = login(server, user, "pw", db)
    assert run(u, "SELECT COUNT(*) FROM t") == ((0,),)
    enabled = run(u, "SELECT ROLE_NAME FROM information_schema.ENABLED_ROLES ORDER BY 1")
    assert enabled == tuple(sorted(((inner,), (outer,))))
    grants = [r[0] for r in run(u, "SHOW GRANTS")]
    assert f"GRANT SELECT ON `{db}`.* TO `{user}`@`%`" in grants
    assert f"GRANT `{outer}`@`%` TO `{user}`@`%`" in grants

    # A user with no privileges and no roles: nothing to activate.
    b = login(server, bare, "pw")
    assert code_of(lambda: run(b, f"SET ROLE `{inner}`")) == 3530
    assert code_of(lambda: run(b, f"GRANT `{inner}` TO `{bare}`")) == 1227
    assert code_of(lambda: run(b, "CREATE ROLE x_nope")) == 1227
    assert code_of(lambda: run(b, f"SHOW GRANTS FOR `{user}`")) == 1044
    run(b, "SET ROLE ALL")
    assert run(b, "SELECT CURRENT_ROLE()") == (("NONE",),)
    assert code_of(lambda: run(b, f"SELECT * FROM `{db}`.t")) == 1142
    # activate_all_roles_on_login needs SUPER; with it on, logins start
    # with every granted role.
    assert code_of(lambda: run(b, "SET GLOBAL activate_all_roles_on_login = ON")) == 1227
    server.sql(f"ALTER USER `{user}` DEFAULT ROLE NONE")
    server.sql("SET GLOBAL activate_all_roles_on_login = ON")
    try:
        u3 = login(server, user, "pw", db)
        assert run(u3, "SELECT CURRENT_ROLE()") == ((f"`{outer}`@`%`",),)
        u3.close()
    finally:
        server.sql("SET GLOBAL activate_all_roles_on_login = OFF")
    u.close()
    b.close()


@pytest.mark.parametrize("crash", [False, True], ids=["clean", "kill9"])
def test_roles_survive_restart(server_factory, crash):
    s = server_factory("roles")
    setup = """CREATE DATABASE app; CREATE TABLE app.t (id INT PRIMARY KEY);
        INSERT INTO app.t VALUES (1); CREATE ROLE reader, writer, gone;
        GRANT SELECT ON app.t TO reader; GRANT INSERT ON app.* TO writer;
        GRANT reader TO writer; CREATE USER alice IDENTIFIED BY 'a1';
        GRANT writer TO alice WITH ADMIN OPTION; GRANT gone TO alice;
        SET DEFAULT ROLE writer TO alice; DROP ROLE gone"""
    for statement in setup.split(";"):
        s.sql(statement.strip())
    before = sorted(r[0] for r in s.sql("SHOW GRANTS FOR alice"))
    assert before == ["GRANT USAGE ON *.* TO `alice`@`%`",
                      "GRANT `writer`@`%` TO `alice`@`%` WITH ADMIN OPTION"]
    for round_ in range(2):
        s.restart(crash=crash)
        assert sorted(r[0] for r in s.sql("SHOW GRANTS FOR alice")) == before
        assert code_of(lambda: login(s, "reader", "")) == 3118
        a = login(s, "alice", "a1", "app")
        assert run(a, "SELECT CURRENT_ROLE()") == (("`writer`@`%`",),)
        assert run(a, "SELECT COUNT(*) FROM t") == ((1 + round_,),)
        run(a, f"INSERT INTO t VALUES ({2 + round_})")
        a.close()
    if not crash:
        log = open(s.log_path, errors="replace").read()
        assert re.search(r"loading checkpoint", log), log[-2000:]
    s.sql("REVOKE writer FROM alice")
    s.restart(crash=crash)
    # Nothing reaches app any more: not even as the login's database.
    assert code_of(lambda: login(s, "alice", "a1", "app")) == 1044
    a = login(s, "alice", "a1")
    assert run(a, "SELECT CURRENT_ROLE()") == (("NONE",),)
    assert code_of(lambda: run(a, "SELECT COUNT(*) FROM app.t")) == 1142
    a.close()


def test_prepared_statements_see_the_active_roles(server, db, names):
    """Binary-protocol statements: privileges are checked at EXECUTE with
    the roles active then."""
    import mysql.connector

    role, user = names("rp", "u")
    server.sql(f"CREATE TABLE `{db}`.t (id INT PRIMARY KEY)")
    server.sql(f"INSERT INTO `{db}`.t VALUES (7)")
    server.sql(f"CREATE ROLE `{role}`")
    server.sql(f"GRANT SELECT ON `{db}`.t TO `{role}`")
    server.sql(f"CREATE USER `{user}` IDENTIFIED WITH mysql_native_password BY 'pw'")
    server.sql(f"GRANT `{role}` TO `{user}`")
    cnx = mysql.connector.connect(host="127.0.0.1", port=server.port, user=user,
                                  password="pw", connection_timeout=10)
    try:
        cur = cnx.cursor(prepared=True)
        cur.execute("SET ROLE ALL")
        cur.execute(f"SELECT id FROM `{db}`.t WHERE id = ?", (7,))
        assert cur.fetchall() == [(7,)]
        cur.execute("SELECT CURRENT_ROLE()")
        assert cur.fetchall() == [(f"`{role}`@`%`",)]
        server.sql(f"REVOKE `{role}` FROM `{user}`")
        with pytest.raises(mysql.connector.Error) as e:
            cur.execute(f"SELECT id FROM `{db}`.t WHERE id = ?", (7,))
            cur.fetchall()
        assert e.value.errno == 1142
    finally:
        cnx.close()
