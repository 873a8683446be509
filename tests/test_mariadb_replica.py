"""A real MySQL-protocol replica on lockstep's binlog stream: MariaDB's
mariadbd (when installed), with its own data directory, replicates from
lockstep by position (MASTER_USE_GTID=no: MariaDB's GTIDs are not
MySQL's) with rpl_semi_sync_slave_enabled=ON. Its I/O thread asks for
semisync and acknowledges each transaction; lockstep's commits count as
acknowledged (Rpl_semi_sync_source_yes_tx) and the tables end equal.

MariaDB 10.11 knows neither MySQL 8's default collation id 255 nor its
JSON type, as with a real MySQL 8 source: the replica gets a user-defined
utf8mb4_0900_ai_ci (cdc_support.py) and the tables have no JSON."""

import shutil
import time

import pytest

from lockstep_server import TARGET, Server, free_port
from cdc_support import charsets_dir

pytestmark = [
    pytest.mark.skipif(TARGET != "lockstep", reason="lockstep's stream"),
    pytest.mark.skipif(not (shutil.which("mariadbd") and shutil.which("mariadb-install-db")),
                       reason="no mariadbd"),
]

TABLE = """CREATE TABLE mrep.t (id INT PRIMARY KEY, a BIGINT UNSIGNED, b DECIMAL(20,6),
    c VARCHAR(50), d TEXT, e BLOB, f DATETIME(6), g DATE, h TIME(3), i YEAR, j BIT(10),
    k DOUBLE, l FLOAT, m CHAR(5), n ENUM('x','y'), o SET('p','q'), p TIMESTAMP(2) NULL,
    r TINYINT, s MEDIUMINT UNSIGNED, u VARBINARY(10))"""

ROWS = [
    (1, 18446744073709551615, "-12345.678901", "héllo", "z" * 3000, b"\x00\xff\x10",
     "2024-02-29 23:59:58.123456", "1999-12-31", "-12:34:56.789", 2024, 0b1010101010,
     2.5, -0.75, "ab", "y", "p,q", "2020-01-01 00:00:00.12", -5, 16777215, b"\x00\x01"),
    (2,) + (None,) * 19,
    (3, 0, "0", "", "", b"", "1970-01-01 00:00:00", "2000-01-01", "-00:00:00.001", 1901, 0,
     0.0, 0.0, "", "x", "", "1970-01-01 00:00:01", 0, 0, b""),
]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    source = Server(tmp_path_factory.mktemp("mrep-src"), name="mrep-src")
    source.port = free_port()
    source.start()
    work = tmp_path_factory.mktemp("mrep-replica")
    charsets = charsets_dir(str(work / "charsets"))
    if charsets is None:
        source.cleanup()
        pytest.skip("MariaDB's character-set files are not installed")
    replica = Server(work, target="mariadb", name="mrep-replica",
                     args=["--server-id", "2", "--rpl-semi-sync-slave-enabled", "ON",
                           "--character-sets-dir", charsets])
    replica.port = free_port()
    replica.start()
    yield source, replica
    replica.cleanup()
    source.cleanup()


def replica_status(replica):
    conn = replica.connect()
    with conn.cursor() as cur:
        cur.execute("SHOW SLAVE STATUS")
        names = [d[0] for d in cur.description]
        row = cur.fetchone()
    conn.close()
    return dict(zip(names, row)) if row else {}


def caught_up(source, replica, timeout=60):
    """Waits until the replica has applied everything up to the source's
    current position; fails with the replica's errors if it stops."""
    pos = source.sql("SHOW MASTER STATUS")[0][1]
    deadline = time.monotonic() + timeout
    while True:
        st = replica_status(replica)
        if st.get("Exec_Master_Log_Pos") == pos:
            return st
        assert st.get("Slave_SQL_Running") == "Yes" and st.get("Slave_IO_Running") != "No", {
            k: st.get(k) for k in ("Last_IO_Error", "Last_SQL_Error", "Exec_Master_Log_Pos")}
        assert time.monotonic() < deadline, (pos, st.get("Exec_Master_Log_Pos"))
        time.sleep(0.1)


def semi(server, pattern):
    return {k: v for k, v in server.sql(f"SHOW STATUS LIKE '{pattern}'")}


def test_mariadb_replicates_with_semisync(pair):
    source, replica = pair
    source.sql("SET GLOBAL rpl_semi_sync_source_timeout = 10000")
    source.sql("SET GLOBAL rpl_semi_sync_source_enabled = 1")
    replica.sql(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={source.port}, "
                "MASTER_USER='root', MASTER_PASSWORD='', MASTER_USE_GTID=no, "
                "MASTER_LOG_FILE='binlog.000001', MASTER_LOG_POS=4")
    replica.sql("START SLAVE")
    deadline = time.monotonic() + 30
    while semi(source, "Rpl_semi_sync_source_clients")["Rpl_semi_sync_source_clients"] != "1":
        assert time.monotonic() < deadline, replica_status(replica).get("Last_IO_Error")
        time.sleep(0.1)
    assert semi(replica, "Rpl_semi_sync_slave_status")["Rpl_semi_sync_slave_status"] == "ON"
    before = semi(source, "Rpl_semi_sync_source%")
    source.sql("CREATE DATABASE mrep")
    source.sql(TABLE)
    conn = source.connect(db="mrep")
    with conn.cursor() as cur:
        cur.executemany(f"INSERT INTO t VALUES ({', '.join(['%s'] * 20)})", ROWS)
        cur.execute("UPDATE t SET c = 'upd', h = '-00:00:00.5', j = 3 WHERE id IN (1, 3)")
        cur.execute("DELETE FROM t WHERE id = 2")
        cur.execute("INSERT INTO t (id, r) VALUES (4, 4)")
    conn.close()
    after = semi(source, "Rpl_semi_sync_source%")
    # Six commits, each acknowledged by the replica before it returned.
    yes = int(after["Rpl_semi_sync_source_yes_tx"]) - int(before["Rpl_semi_sync_source_yes_tx"])
    assert yes == 6 and after["Rpl_semi_sync_source_no_tx"] == before["Rpl_semi_sync_source_no_tx"]
    assert after["Rpl_semi_sync_source_status"] == "ON"
    caught_up(source, replica)
    query = "SELECT * FROM mrep.t ORDER BY id"
    assert replica.sql(query) == source.sql(query)
    assert [r[0] for r in replica.sql(query)] == [1, 3, 4]
    assert int(semi(replica, "Rpl_semi_sync_slave_send_ack")["Rpl_semi_sync_slave_send_ack"]) >= 6


def test_replica_stopped_source_times_out(pair):
    """With the replica's I/O thread stopped a commit waits for the
    timeout, then the source goes on asynchronously (status OFF); the
    replica catches up when started again."""
    source, replica = pair
    replica.sql("STOP SLAVE IO_THREAD")
    deadline = time.monotonic() + 10
    while semi(source, "Rpl_semi_sync_source_clients")["Rpl_semi_sync_source_clients"] != "0":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    source.sql("SET GLOBAL rpl_semi_sync_source_timeout = 300")
    t0 = time.monotonic()
    source.sql("INSERT INTO mrep.t (id) VALUES (10)")
    assert time.monotonic() - t0 >= 0.25
    assert semi(source, "Rpl_semi_sync_source_status")["Rpl_semi_sync_source_status"] == "OFF"
    replica.sql("START SLAVE IO_THREAD")
    caught_up(source, replica)
    assert replica.sql("SELECT id FROM mrep.t WHERE id = 10") == ((10,),)
    source.sql("INSERT INTO mrep.t (id) VALUES (11)")
    caught_up(source, replica)
    assert semi(source, "Rpl_semi_sync_source_status")["Rpl_semi_sync_source_status"] == "ON"
    source.sql("SET GLOBAL rpl_semi_sync_source_enabled = 0")
