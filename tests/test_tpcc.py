"""TPC-C with lockstep's own driver (crates/workload): load 1 warehouse, check
consistency, run a few terminals for 20 seconds, check again.

The driver is target/release/lockstep-workload, built by scripts/test.sh
(override with LOCKSTEP_WORKLOAD_BIN). Nothing is built here.
LOCKSTEP_TPCC_SECONDS and LOCKSTEP_TPCC_TERMINALS change the run.
"""

import json
import os
import subprocess

import pytest

from lockstep_server import BENCH, HOST, require_bench
SECONDS = int(os.environ.get("LOCKSTEP_TPCC_SECONDS", "20"))
TERMINALS = int(os.environ.get("LOCKSTEP_TPCC_TERMINALS", "4"))
DB = "tpcc_test"
# Errors a correct server may return under contention; the driver retries them.
RETRIED = {"1213", "1205"}


def bench(server, *args, timeout):
    require_bench()
    cmd = [BENCH, "tpcc", args[0], f"--host={HOST}", f"--port={server.port}", "--user=root",
           "--password=", f"--database={DB}", *args[1:]]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return r, f"$ {' '.join(cmd)}\nexit {r.returncode}\n{r.stdout[-6000:]}\n{r.stderr[-6000:]}"


@pytest.fixture
def tpcc_db(server):
    yield
    try:
        server.sql(f"DROP DATABASE IF EXISTS `{DB}`")
    except Exception:
        pass


def test_tpcc_load_run_check(server, tpcc_db, tmp_path):
    r, out = bench(server, "load", "--warehouses=1", timeout=900)
    assert r.returncode == 0, out
    r, out = bench(server, "check", timeout=300)
    assert r.returncode == 0 and "OK" in r.stdout, "after load:\n" + out

    # Row counts the load must produce (spec 4.3.3.1).
    counts = {t: server.sql(f"SELECT COUNT(*) FROM {DB}.{t}")[0][0] for t in (
        "bmsql_warehouse", "bmsql_district", "bmsql_customer", "bmsql_history",
        "bmsql_oorder", "bmsql_new_order", "bmsql_item", "bmsql_stock")}
    assert counts == {"bmsql_warehouse": 1, "bmsql_district": 10, "bmsql_customer": 30000,
                      "bmsql_history": 30000, "bmsql_oorder": 30000, "bmsql_new_order": 9000,
                      "bmsql_item": 100000, "bmsql_stock": 100000}, counts
    original = server.sql(f"SELECT COUNT(*) FROM {DB}.bmsql_item WHERE i_data LIKE '%ORIGINAL%'")
    assert 8000 <= original[0][0] <= 12000, original

    report = tmp_path / "report.json"
    r, out = bench(server, "run", f"--terminals={TERMINALS}", f"--duration={SECONDS}",
                   "--interval=5", f"--json={report}", "--grace=60",
                   timeout=SECONDS + 300)
    assert r.returncode == 0, out
    rep = json.loads(report.read_text())
    assert rep["unfinished_terminals"] == 0, out
    unexpected = {k: v for k, v in rep["errors"].items() if k not in RETRIED}
    assert not unexpected, f"errors other than deadlock/lock timeout: {unexpected}\n{out}"
    assert rep["tpmC"] > 0, out
    for t in ("new_order", "payment", "order_status", "delivery", "stock_level"):
        assert rep["txn"][t]["count"] > 0, f"no {t} committed\n{out}"

    r, out2 = bench(server, "check", timeout=300)
    assert r.returncode == 0 and "OK" in r.stdout, "after run:\n" + out2 + "\n\nrun:\n" + out
