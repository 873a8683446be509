"""Fixtures: a server under test (lockstep or MariaDB) and connections to it.

LOCKSTEP_TARGET=lockstep|mariadb picks the server (see lockstep_server.py),
LOCKSTEP_SUITE=quick|full the size of the heavier tests (sysbench, crash).
"""

import re

import pytest

from lockstep_server import QUICK, SUITE, TARGET, Server, ServerError


def pytest_report_header(config):
    return f"lockstep suite: target={TARGET} suite={SUITE}"


def _start(tmp_path_factory, name, **server_kw):
    server = Server(tmp_path_factory.mktemp(name), name=name, **server_kw)
    try:
        server.start()
        return server
    except ServerError as e:
        error = str(e)
    server.cleanup()
    pytest.fail(f"could not start {TARGET} server: {error}", pytrace=False)


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """One server shared by the non-destructive tests of the session."""
    server = _start(tmp_path_factory, "shared")
    yield server
    server.cleanup()


@pytest.fixture
def server_factory(tmp_path_factory):
    """Start private servers (for tests that kill or restart them, or need
    flags: make(args=["--max-connections", "20"])); all are stopped when the
    test ends, pass or fail."""
    started = []

    def make(name="node", **server_kw):
        """server_kw: Server options, e.g. extra_args=[...] (serve flags)."""
        s = _start(tmp_path_factory, name, **server_kw)
        started.append(s)
        return s

    yield make
    for s in started:
        s.cleanup()


@pytest.fixture
def db(server, request):
    """A fresh database named after the test, dropped afterwards."""
    name = "t_" + re.sub(r"[^a-zA-Z0-9]+", "_", request.node.name)[:50].strip("_").lower()
    server.sql(f"DROP DATABASE IF EXISTS `{name}`")
    server.sql(f"CREATE DATABASE `{name}`")
    yield name
    try:
        server.sql(f"DROP DATABASE IF EXISTS `{name}`")
    except Exception:
        pass


@pytest.fixture
def connect(server, db):
    """connect(**kw) -> a PyMySQL connection to the test's database; all closed
    at the end of the test."""
    conns = []

    def make(**kw):
        kw.setdefault("db", db)
        c = server.connect(**kw)
        conns.append(c)
        return c

    yield make
    for c in conns:
        try:
            c.close()
        except Exception:
            pass


@pytest.fixture
def cur(connect):
    """A cursor on an autocommit connection to the test's database."""
    c = connect()
    with c.cursor() as cursor:
        yield cursor


@pytest.fixture(scope="session")
def quick():
    return QUICK


@pytest.fixture
def replication_servers(tmp_path_factory):
    """make(n, replica_args=[...]) -> n private lockstep servers for replication
    tests, with --server-id 1..n, on ports LOCKSTEP_REPL_PORT_BASE,
    +1, ... when that is set (else free ports); the first is the source,
    the others get replica_args. All are stopped at the end."""
    import os
    started = []
    base = os.environ.get("LOCKSTEP_REPL_PORT_BASE")

    def make(n, replica_args=()):
        servers = []
        for i in range(n):
            s = Server(tmp_path_factory.mktemp(f"repl{i}"), name=f"repl{i}",
                       args=["--server-id", str(i + 1)] + list(replica_args if i else ()))
            if base:
                s.port = int(base) + len(started)
            started.append(s)
            try:
                s.start()
            except ServerError as e:
                pytest.fail(f"could not start server {i}: {e}", pytrace=False)
            servers.append(s)
        return servers

    yield make
    for s in started:
        s.cleanup()
