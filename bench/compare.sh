#!/usr/bin/env bash
# One command for the side-by-side benchmark of lockstep and MariaDB:
# installs what is missing, builds, raises limits, and runs bench/compare.py
# (which starts both servers, loads the same data, sweeps, and writes
# bench/results/<date>-<commit>.md with charts).
#
#   bash bench/compare.sh --quick     # minutes
#   bash bench/compare.sh             # full: 4x100k sysbench tables, 10 warehouses, 60 s/point
#
# Extra arguments go to compare.py (see --help). Environment:
#   SKIP_INSTALL=1  don't apt-get;  SKIP_BUILD=1  don't cargo build
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
if [ "${SKIP_INSTALL:-0}" != 1 ]; then
    missing=()
    command -v sysbench >/dev/null || missing+=(sysbench)
    command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server)
    command -v mariadb >/dev/null || missing+=(mariadb-client)
    if [ ${#missing[@]} -gt 0 ]; then
        echo "installing: ${missing[*]}"
        $SUDO apt-get update
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${missing[@]}"
    fi
fi
export PATH="$PATH:/usr/sbin"
[ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    cargo build --release -p lockstep-server -p lockstep-workload
fi

# 1024 clients, each end of each connection a descriptor, plus the servers'
# own files: raise the open-files limit as far as allowed.
ulimit -n 1048576 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true
ulimit -u unlimited 2>/dev/null || true
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 8192 ]; then
    echo "warning: open files limit is $(ulimit -n); 1024-connection points may fail" >&2
fi

# compare.py stops both servers itself (also on SIGINT/SIGTERM); the trap
# forwards a signal to it and waits.
python3 bench/compare.py "$@" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid' INT TERM
wait $pid
