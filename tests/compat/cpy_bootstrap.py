"""Start Connector/Python's suite against an external server, as its
unittests.py --use-external-server does, but tolerant of a server that
returns no row for SHOW VARIABLES LIKE 'license'/'socket' (lockstep: its
runner dies at start-up on that, before any test runs).

Run by pyunit_wrap.py in the sdist's top directory:
    cpy_bootstrap.py HOST PORT [--compress]
"""

import os
import sys
import unittest

sys.path[:0] = [os.path.join(os.getcwd(), "lib"), os.getcwd()]

import tests  # noqa: E402  (the suite's package, found via the line above)
from tests import mysqld  # noqa: E402

# Not protocol tests: HeatWave ML / OpenTelemetry need extra packages and services.
EXCLUDE = ("tests.ai.", "tests.otel.")


def variable(cur, name, default):
    cur.execute(f"SHOW VARIABLES LIKE '{name}'")
    row = cur.fetchone()
    if row is None:
        print(f"compat: server has no variable {name!r}; using {default!r}", flush=True)
    return row[1] if row else default


def setup(host, port, compress):
    import mysql.connector
    srv = mysqld.MySQLExternalServer("", "server1")
    srv.client_config = {"host": host, "port": port, "user": "root", "password": "",
                         "database": "myconnpy", "connection_timeout": 60,
                         "unix_socket": None}  # unittests.py's default; tests read the key
    if compress:
        srv.client_config["compress"] = True
    srv.xplugin_config = {"host": host, "port": 1, "user": "root", "password": "",
                          "schema": "myconnpy"}
    with mysql.connector.connect(host=host, port=port, user="root", password="") as cnx:
        cur = cnx.cursor()
        cur.execute("DROP DATABASE IF EXISTS myconnpy")
        cur.execute("CREATE DATABASE myconnpy CHARACTER SET utf8mb4")
        cur.execute("SELECT VERSION()")
        ver = cur.fetchone()[0]
        srv.version = tuple(int(x) for x in ver.split("-")[0].split(".")[:3])
        srv.license = variable(cur, "license", "GPL")
        srv.unix_socket = variable(cur, "socket", "")
    tests.OPTIONS_INIT = True
    tests.IPV6_AVAILABLE = False
    tests.MYSQL_SERVERS.append(srv)
    tests.MYSQL_EXTERNAL_SERVER = True
    tests.MYSQL_VERSION = srv.version
    tests.MYSQL_LICENSE = srv.license
    tests.MYSQL_VERSION_TXT = ".".join(map(str, srv.version))



def main():
    host, port = sys.argv[1], int(sys.argv[2])
    setup(host, port, "--compress" in sys.argv)
    names = [mod for _, mod, _ in tests.get_test_modules() if not mod.startswith(EXCLUDE)]
    # The asyncio modules run with compression too since the compressed
    # framing fix (crates/protocol/src/compress.rs); every test is bounded.
    suite = unittest.defaultTestLoader.loadTestsFromNames(names)
    ok = unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
