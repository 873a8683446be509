#!/usr/bin/env bash
# Where lockstep's time goes under one workload: starts a fresh release
# server, loads the data, runs the workload, records the server with perf
# (DWARF call stacks) in the middle of the run, and writes a flame graph
# plus the functions with the most self time:
#
#   bash bench/profile.sh [TEST] [THREADS] [SECONDS]
#   bash bench/profile.sh oltp_read_write 16 30
#   bash bench/profile.sh tpcc 16 30
#
# TEST is a sysbench test (4 x 100k rows, uniform keys) or `tpcc` (our
# driver, WAREHOUSES=10). Output: bench/results/<date>-<commit>-flame-
# <test>-<threads>.svg and .txt. Environment: SKIP_INSTALL=1, SKIP_BUILD=1,
# WAREHOUSES, FREQ (samples/s, default 499), SCOPE=machine to record every
# process on the machine (the client too: each thread name is a root of the
# graph; the file name gets "-machine") instead of the server alone.
set -euo pipefail
cd "$(dirname "$0")/.."

TEST=${1:-oltp_read_write}
THREADS=${2:-16}
SECS=${3:-30}
WAREHOUSES=${WAREHOUSES:-10}
FREQ=${FREQ:-499}
SCOPE=${SCOPE:-server}

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
if [ "${SKIP_INSTALL:-0}" != 1 ]; then
    missing=()
    command -v perf >/dev/null || missing+=(linux-perf)
    command -v sysbench >/dev/null || missing+=(sysbench)
    command -v mysql >/dev/null || command -v mariadb >/dev/null || missing+=(mariadb-client)
    if [ ${#missing[@]} -gt 0 ]; then
        $SUDO apt-get update
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${missing[@]}"
    fi
fi
[ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
[ "${SKIP_BUILD:-0}" = 1 ] || cargo build --release -p lockstep-server -p lockstep-workload
ulimit -n 65536 2>/dev/null || true
# perf needs to see a process it did not start.
[ -w /proc/sys/kernel/perf_event_paranoid ] && echo -1 > /proc/sys/kernel/perf_event_paranoid

client=$(command -v mysql || command -v mariadb)
work=$(mktemp -d /tmp/lockstep-profile-XXXXXX)
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
target/release/lockstep serve --port "$port" --datadir "$work/data" \
    --transaction-isolation READ-COMMITTED --max-connections 2100 > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do
    "$client" -h127.0.0.1 -P"$port" -uroot -e 'SELECT 1' > /dev/null 2>&1 && break
    sleep 0.2
done

if [ "$TEST" = tpcc ]; then
    "$client" -h127.0.0.1 -P"$port" -uroot -e 'CREATE DATABASE tpcc'
    tpcc() {
        target/release/lockstep-workload tpcc "$1" --host=127.0.0.1 --port="$port" --user=root \
            --password= --database=tpcc "${@:2}"
    }
    tpcc load --warehouses="$WAREHOUSES" > /dev/null
    run() { tpcc run --terminals="$THREADS" --duration="$SECS" --quiet; }
else
    "$client" -h127.0.0.1 -P"$port" -uroot -e 'CREATE DATABASE sbtest'
    sb() {
        sysbench "$TEST" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" \
            --mysql-user=root --mysql-db=sbtest --tables=4 --table-size=100000 \
            --threads="$THREADS" --time="$SECS" --rand-type=uniform --db-ps-mode=auto \
            --mysql-ignore-errors=1213,1205 --report-interval=0 "$1"
    }
    sb prepare > /dev/null
    run() { sb run | grep -E "transactions:|queries:|95th"; }
fi

echo "profiling lockstep (pid $server, scope $SCOPE): $TEST, $THREADS threads, ${SECS} s"
run > "$work/run.txt" 2>&1 &
runner=$!
# Skip the first quarter (connections, warm caches), then record a window.
sleep $((SECS / 4))
window=$((SECS / 2 < 15 ? SECS / 2 : 15))
target=(-p "$server")
[ "$SCOPE" = machine ] && target=(-a)
perf record -F "$FREQ" --call-graph dwarf,16384 "${target[@]}" -o "$work/perf.data" \
    -- sleep "$window" 2> "$work/perf.log"
wait "$runner" || true
cat "$work/run.txt"

out="bench/results/$(date -u +%Y-%m-%d)-$(git rev-parse --short HEAD)-flame-$TEST-$THREADS"
what="lockstep server"
if [ "$SCOPE" = machine ]; then
    out="$out-machine"
    what="whole machine (lockstep and its client)"
fi
perf script -i "$work/perf.data" 2> /dev/null |
    python3 bench/flamegraph.py --title "$what, $TEST, $THREADS threads ($(git rev-parse --short HEAD))" \
        > "$out.svg" 2> "$out.txt"
cat "$work/run.txt" >> "$out.txt"
head -20 "$out.txt"
echo "wrote $out.svg and $out.txt"
