#!/usr/bin/env bash
# A/B of two lockstep builds on this machine: both servers run side by side
# on the same data, sysbench alternates between them (A, B, A, B, ...), and
# the medians of throughput and of server CPU per transaction are printed.
# Alternating runs see the same machine noise, so small differences show in
# the medians where single runs (±15% here) hide them.
#
#   bash bench/ab.sh BIN_A BIN_B [TEST] [THREADS] [SECONDS] [REPEATS]
#   bash bench/ab.sh /tmp/lockstep-old target/release/lockstep oltp_read_write 16 10 5
#
# TEST is a sysbench test, `tpcc` (our driver, THREADS terminals on
# WAREHOUSES warehouses, default 10; throughput is then tpmC and CPU is per
# transaction of any type), or mux_oltp_point_select / mux_oltp_read_write /
# mux_oltp_write_only (sysbench's statements from `lockstep-workload oltp`,
# whose THREADS connections share two client threads).
#
# Defaults: oltp_point_select, 16 threads, 10 s, 5 repeats; 4 tables of
# 100k rows, uniform keys. Environment: TABLES, TABLE_SIZE; FLAGS_A and
# FLAGS_B (extra server flags for A and B); WARMUP (seconds each run warms
# its sysbench client up before it is measured, as compare.py does; default
# 2, times threads/256 above 256 threads).
set -euo pipefail

A=${1:?binary A}
B=${2:?binary B}
TEST=${3:-oltp_point_select}
THREADS=${4:-16}
SECS=${5:-10}
REPS=${6:-5}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
WAREHOUSES=${WAREHOUSES:-10}
BENCH_BIN=${BENCH_BIN:-$(dirname "$0")/../target/release/lockstep-workload}
FLAGS_A=${FLAGS_A:-}
FLAGS_B=${FLAGS_B:-}
WARMUP=$(( ${WARMUP:-2} * (THREADS > 256 ? THREADS / 256 : 1) ))
unit=$([ "$TEST" = tpcc ] && echo tpmC || echo tps)

work=$(mktemp -d /tmp/lockstep-ab-XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do while kill -0 "$p" 2>/dev/null; do sleep 0.2; done; done
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

ports=()
for i in 0 1; do
    bin=$([ "$i" = 0 ] && echo "$A" || echo "$B")
    flags=$([ "$i" = 0 ] && echo "$FLAGS_A" || echo "$FLAGS_B")
    port=$(free_port)
    dir="$work/$port"
    mkdir -p "$dir"
    # shellcheck disable=SC2086 # the flags are meant to split into words
    "$bin" serve --port "$port" --datadir "$dir/data" --transaction-isolation READ-COMMITTED \
        --max-connections 2100 $flags > "$dir/server.log" 2>&1 &
    pids+=($!)
    ports+=("$port")
    for _ in $(seq 100); do
        mysql -h127.0.0.1 -P"$port" -uroot -e 'SELECT 1' > /dev/null 2>&1 && break
        sleep 0.2
    done
    mysql -h127.0.0.1 -P"$port" -uroot -e 'CREATE DATABASE sbtest; CREATE DATABASE tpcc'
done

sb() { # port command [sysbench options]
    local port=$1 cmd=$2
    shift 2
    sysbench "$TEST" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" \
        --mysql-user=root --mysql-db=sbtest --tables="$TABLES" --table-size="$TABLE_SIZE" \
        --threads="$THREADS" --time="$SECS" --rand-type=uniform --db-ps-mode=auto \
        --mysql-ignore-errors=1213,1205 --report-interval=0 "$@" "$cmd"
}
MUX=${TEST#mux_oltp_}
[ "$MUX" = "$TEST" ] && MUX="" || MUX=${MUX//_/-}
# Our drivers: tpcc, or the multiplexed oltp client.
driver() { [ "$TEST" = tpcc ] || [ -n "$MUX" ]; }
mux() { # port [options]
    local port=$1
    shift
    "$BENCH_BIN" oltp --port "$port" --test "$MUX" --connections "$THREADS" --tables "$TABLES" \
        --table-size "$TABLE_SIZE" --threads 2 --quiet "$@"
}
tpcc() { # port command [options]
    local port=$1 cmd=$2
    shift 2
    "$BENCH_BIN" tpcc "$cmd" --port "$port" "$@"
}
prepare() { # port
    if [ "$TEST" = tpcc ]; then
        tpcc "$1" load --warehouses "$WAREHOUSES" > /dev/null 2>&1
    elif [ -n "$MUX" ]; then
        TEST=oltp_read_write sb "$1" prepare > /dev/null
    else
        sb "$1" prepare > /dev/null
    fi
}
warm() { # port
    if [ "$TEST" = tpcc ]; then
        tpcc "$1" run --terminals "$THREADS" --duration "$SECS" --quiet > /dev/null
    elif [ -n "$MUX" ]; then
        mux "$1" --duration "$SECS" > /dev/null
    else
        sb "$1" run > /dev/null
    fi
}
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# One measured run of server $1: prints throughput, transactions and the
# server's CPU ticks, all over the window after the client's warmup.
measure() {
    local log="$work/run.log" c0 c1 pid
    if driver; then
        if [ "$TEST" = tpcc ]; then
            tpcc "${ports[$1]}" run --terminals "$THREADS" --duration "$SECS" --warmup "$WARMUP" \
                --quiet --json "$work/run.json" > "$log" &
        else
            mux "${ports[$1]}" --duration "$SECS" --warmup "$WARMUP" --json "$work/run.json" > "$log" &
        fi
        pid=$!
        sleep "$WARMUP"
        c0=$(cpu "${pids[$1]}")
        wait "$pid"
        c1=$(cpu "${pids[$1]}")
        python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
tpcc = "tpmC" in d
print(round(d["tpmC"] if tpcc else d["tps"], 1), d["transactions"] if tpcc else d["events"], end=" ")' "$work/run.json"
    else
        # The checkpoint report ends the warmup and resets sysbench's
        # counters; the server's CPU is measured from that moment on.
        sb "${ports[$1]}" run --time=$((WARMUP + SECS)) --report-checkpoints="$WARMUP" > "$log" &
        pid=$!
        until grep -q 'Checkpoint report' "$log" || ! kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
        c0=$(cpu "${pids[$1]}")
        wait "$pid"
        c1=$(cpu "${pids[$1]}")
        echo -n "$(grep -oP 'transactions:\s+\d+\s+\(\K[0-9.]+' "$log" | tail -n 1) "
        echo -n "$(grep -oP 'transactions:\s+\K\d+' "$log" | tail -n 1) "
    fi
    echo "$((c1 - c0))"
}

for i in 0 1; do
    prepare "${ports[$i]}"
done

# One unmeasured run each first: caches, allocator and purge reach their
# steady state, and the load's log is behind both servers.
for i in 0 1; do
    warm "${ports[$i]}"
done

tck=$(getconf CLK_TCK)
declare -a tps_a tps_b us_a us_b
for r in $(seq "$REPS"); do
    for i in 0 1; do
        read -r tps trx ticks < <(measure "$i")
        us=$(awk -v c="$ticks" -v t="$tck" -v n="$trx" 'BEGIN {printf "%.1f", c * 1e6 / t / n}')
        if [ "$i" = 0 ]; then tps_a+=("$tps"); us_a+=("$us"); else tps_b+=("$tps"); us_b+=("$us"); fi
        echo "run $r $( [ "$i" = 0 ] && echo A || echo B ): $tps $unit, server $us us/trx"
    done
done

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
ma=$(median "${tps_a[@]}"); mb=$(median "${tps_b[@]}")
if [ "$TEST" = tpcc ]; then data="$WAREHOUSES warehouses"; else data="uniform keys, $TABLES x $TABLE_SIZE rows"; fi
echo "$TEST, $THREADS threads, $REPS x $SECS s (+$WARMUP s client warmup), $data"
echo "A $A $FLAGS_A: median $ma $unit, server $(median "${us_a[@]}") us/trx"
echo "B $B $FLAGS_B: median $mb $unit, server $(median "${us_b[@]}") us/trx"
echo "B/A throughput: $(awk -v a="$ma" -v b="$mb" 'BEGIN {printf "%.3f", b / a}')"
