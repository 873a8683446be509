#!/usr/bin/env bash
# Driver compatibility harness (tests/compat/): driver test suites against
# lockstep (and, in the full form, MariaDB 10.11 side by side).
#
#   bash scripts/compat.sh quick [suite...]  # PyMySQL + go-sql-driver on lockstep;
#                                            # fails if a suite passes fewer tests
#                                            # than tests/compat/baseline.json
#   bash scripts/compat.sh full [suite...]   # every suite on both servers; rewrites
#                                            # bench/results/compat/ and docs/compatibility.md
#
# Suites: go-sql-driver pymysql connector-python connector-python-compress
#         node-mysql2 connector-j rust-mysql sqlalchemy (full only: slow)
# Needs target/release/lockstep (cargo build --release -p lockstep-server),
# mariadbd, python3 with pymysql, go (quick); node/npm, java/mvn, cargo (full).
# Downloads go to ${LOCKSTEP_COMPAT_CACHE:-~/.cache/lockstep-compat}.
# LOCKSTEP_COMPAT_TEST_TIMEOUT (s, default 60) bounds each test,
# LOCKSTEP_COMPAT_SUITE_TIMEOUT (s, default 1200) each suite run.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-quick}"
[ $# -gt 0 ] && shift
[ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
[ -d /usr/local/go/bin ] && export PATH="/usr/local/go/bin:$PATH"
# A whole run is bounded too: a hang anywhere becomes a failure.
exec timeout --kill-after=30 "${LOCKSTEP_COMPAT_RUN_TIMEOUT:-7200}" \
    python3 tests/compat/runner.py "$mode" "$@"
