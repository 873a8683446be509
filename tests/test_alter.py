"""ALTER TABLE as migration tools use it: in-place column and key changes,
then a shadow-table copy with an atomic RENAME TABLE cut-over, while a
second connection keeps reading; the result survives kill -9."""

import threading

import pymysql


def run(conn, sql, args=None):
    with conn.cursor() as c:
        c.execute(sql, args)
        return c.fetchall()


def reader(server, db, stop, seen, errors):
    """Counts rows until told to stop; any error is kept for the test."""
    conn = server.connect(db=db)
    try:
        while not stop.is_set():
            try:
                seen.append(run(conn, "SELECT COUNT(*) FROM users")[0][0])
            except pymysql.MySQLError as e:
                errors.append(e)
                return
    finally:
        conn.close()


def test_migration_with_concurrent_reader(server_factory):
    server = server_factory("alter")
    conn = server.connect()
    run(conn, "CREATE DATABASE m")
    run(conn, "USE m")
    run(conn, "CREATE TABLE users (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20) NOT NULL)")
    run(conn, "INSERT INTO users (name) VALUES " + ",".join(f"('u{i}')" for i in range(300)))
    stop, seen, errors = threading.Event(), [], []
    t = threading.Thread(target=reader, args=(server, "m", stop, seen, errors))
    t.start()
    for _ in range(500):
        if seen or errors:
            break
        threading.Event().wait(0.01)
    try:
        run(conn, "ALTER TABLE users ADD COLUMN email VARCHAR(40) NOT NULL DEFAULT '' AFTER name, ALGORITHM=INPLACE, LOCK=NONE")
        run(conn, "UPDATE users SET email = CONCAT(name, '@x')")
        run(conn, "ALTER TABLE users ADD UNIQUE KEY uk_email (email), MODIFY name VARCHAR(30) NOT NULL")
        run(conn, "INSERT INTO users (name, email) VALUES ('late', 'late@x')")
        # pt-online-schema-change's shape: a shadow table, a copy, a swap.
        run(conn, "CREATE TABLE _users_new LIKE users")
        run(conn, "ALTER TABLE _users_new ADD COLUMN age INT NOT NULL DEFAULT 18, ADD INDEX by_age (age)")
        run(conn, "INSERT INTO _users_new (id, name, email) SELECT id, name, email FROM users")
        run(conn, "RENAME TABLE users TO _users_old, _users_new TO users")
        run(conn, "DROP TABLE _users_old")
        # A self-referencing constraint (every age, 18, is an id), enforced.
        run(conn, "ALTER TABLE users ADD FOREIGN KEY (age) REFERENCES users (id)")
        try:
            run(conn, "UPDATE users SET age = 100000 WHERE id = 1")
            raise AssertionError("a row without its parent was accepted")
        except pymysql.MySQLError as e:
            assert e.args[0] == 1452
    finally:
        stop.set()
        t.join(30)
    assert not errors, errors
    assert seen and min(seen) >= 300
    expect = ((301, 301 * 18),)

    def check(c):
        assert run(c, "SELECT COUNT(*), SUM(age) FROM m.users") == expect
        assert run(c, "SELECT name, email FROM m.users WHERE id = 301") == (("late", "late@x"),)
        cols = [r[0] for r in run(c, "SHOW COLUMNS FROM m.users")]
        assert cols == ["id", "name", "email", "age"]
        create = run(c, "SHOW CREATE TABLE m.users")[0][1]
        assert "UNIQUE KEY `uk_email` (`email`)" in create and "KEY `by_age` (`age`)" in create
        assert "FOREIGN KEY (`age`) REFERENCES `users` (`id`)" in create

    check(conn)
    conn.close()
    server.restart(crash=True)
    conn = server.connect()
    check(conn)
    run(conn, "INSERT INTO m.users (name, email) VALUES ('after', 'after@x')")
    assert run(conn, "SELECT id FROM m.users WHERE name = 'after'") == ((302,),)
    conn.close()
