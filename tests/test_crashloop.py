"""The crash loop's short form (see crashloop.py): bank transfers plus sysbench
oltp_write_only, kill -9 at random moments, restart, and every invariant
checked after each restart; prints the recovery-time table.

LOCKSTEP_CRASHLOOP_CYCLES: cycles (quick 12, full 200).
"""

import os

import pytest

from crashloop import CrashLoop, check_progress, summary, table
from lockstep_server import QUICK, TARGET

CYCLES = int(os.environ.get("LOCKSTEP_CRASHLOOP_CYCLES", "12" if QUICK else "200"))


@pytest.mark.skipif(TARGET != "lockstep", reason="reads lockstep's recovery log lines")
def test_crashloop_bank_and_sysbench(tmp_path):
    loop = CrashLoop(tmp_path / "crashloop", CYCLES, bank_threads=8, sb_threads=4,
                     sb_tables=4, sb_table_size=1000 if QUICK else 10000)
    rows = loop.run()
    assert len(rows) == CYCLES
    check_progress(rows)
    print("\n" + table(rows) + "\n" + summary(rows))
