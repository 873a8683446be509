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
# Defaults: oltp_point_select, 16 threads, 10 s, 5 repeats; 4 tables of
# 100k rows, uniform keys. Environment: TABLES, TABLE_SIZE.
set -euo pipefail

A=${1:?binary A}
B=${2:?binary B}
TEST=${3:-oltp_point_select}
THREADS=${4:-16}
SECS=${5:-10}
REPS=${6:-5}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}

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
for bin in "$A" "$B"; do
    port=$(free_port)
    dir="$work/$port"
    mkdir -p "$dir"
    "$bin" serve --port "$port" --datadir "$dir/data" --transaction-isolation READ-COMMITTED \
        --max-connections 2100 > "$dir/server.log" 2>&1 &
    pids+=($!)
    ports+=("$port")
    for _ in $(seq 100); do
        mysql -h127.0.0.1 -P"$port" -uroot -e 'SELECT 1' > /dev/null 2>&1 && break
        sleep 0.2
    done
    mysql -h127.0.0.1 -P"$port" -uroot -e 'CREATE DATABASE sbtest'
done

sb() { # port command
    sysbench "$TEST" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$1" \
        --mysql-user=root --mysql-db=sbtest --tables="$TABLES" --table-size="$TABLE_SIZE" \
        --threads="$THREADS" --time="$SECS" --rand-type=uniform --db-ps-mode=auto \
        --mysql-ignore-errors=1213,1205 --report-interval=0 "$2"
}
for i in 0 1; do
    sb "${ports[$i]}" prepare > /dev/null
done

# One unmeasured run each first: caches, allocator and purge reach their
# steady state, and the load's log is behind both servers.
for i in 0 1; do
    sb "${ports[$i]}" run > /dev/null
done

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
tck=$(getconf CLK_TCK)
declare -a tps_a tps_b us_a us_b
for r in $(seq "$REPS"); do
    for i in 0 1; do
        c0=$(cpu "${pids[$i]}")
        out=$(sb "${ports[$i]}" run)
        c1=$(cpu "${pids[$i]}")
        tps=$(grep -oP 'transactions:\s+\d+\s+\(\K[0-9.]+' <<< "$out")
        trx=$(grep -oP 'transactions:\s+\K\d+' <<< "$out")
        us=$(awk -v c="$((c1 - c0))" -v t="$tck" -v n="$trx" 'BEGIN {printf "%.1f", c * 1e6 / t / n}')
        if [ "$i" = 0 ]; then tps_a+=("$tps"); us_a+=("$us"); else tps_b+=("$tps"); us_b+=("$us"); fi
        echo "run $r $( [ "$i" = 0 ] && echo A || echo B ): $tps tps, server $us us/trx"
    done
done

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
ma=$(median "${tps_a[@]}"); mb=$(median "${tps_b[@]}")
echo "$TEST, $THREADS threads, $REPS x $SECS s, uniform keys, $TABLES x $TABLE_SIZE rows"
echo "A $A: median $ma tps, server $(median "${us_a[@]}") us/trx"
echo "B $B: median $mb tps, server $(median "${us_b[@]}") us/trx"
echo "B/A throughput: $(awk -v a="$ma" -v b="$mb" 'BEGIN {printf "%.3f", b / a}')"
