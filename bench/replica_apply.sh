#!/usr/bin/env bash
# Replica apply speed: a lockstep source and replica on loopback.
#
#   bench/replica_apply.sh BINARY THREADS [SECONDS] [PORT_BASE]
#
# 1. catch-up: sysbench oltp_write_only (4 tables x 10,000 rows) runs
#    SECONDS on the source with the replica stopped; then START REPLICA is
#    timed until WAIT_FOR_EXECUTED_GTID_SET returns: transactions/s.
# 2. live: the replica runs during 30 s of the same load; every second
#    the lag in transactions (source gno - replica gno of the source's
#    uuid) and Seconds_Behind_Source are printed, then the time the
#    replica needs after the load ends.
# Prints one summary line starting with "RESULT".
set -euo pipefail
BIN=${1:?binary}; THREADS=${2:?threads}; SECS=${3:-10}; BASE=${4:-4210}
SRC=$BASE; REP=$((BASE + 1))
WORK=$(mktemp -d /tmp/replbench.XXXX)
M() { mariadb -h127.0.0.1 -uroot --skip-ssl -N -B -P"$@"; }
cleanup() { kill -9 "${SPID:-}" "${RPID:-}" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
"$BIN" serve --port $SRC --datadir "$WORK/src" >"$WORK/src.log" 2>&1 & SPID=$!
"$BIN" serve --port $REP --datadir "$WORK/rep" --server-id 2 >"$WORK/rep.log" 2>&1 & RPID=$!
for p in $SRC $REP; do
  for _ in $(seq 100); do M $p -e 'select 1' >/dev/null 2>&1 && break; sleep 0.1; done
done
M $SRC -e "CREATE USER repl IDENTIFIED WITH mysql_native_password BY 'pw';
  GRANT REPLICATION SLAVE ON *.* TO repl; CREATE DATABASE sbtest"
SB="sysbench oltp_write_only --mysql-host=127.0.0.1 --mysql-port=$SRC --mysql-user=root
  --mysql-password= --mysql-db=sbtest --db-driver=mysql --tables=4 --table-size=10000
  --mysql-ignore-errors=1213 --report-interval=0"
$SB --threads=4 prepare >/dev/null
M $REP -e "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=$SRC,
  SOURCE_USER='repl', SOURCE_PASSWORD='pw', SOURCE_AUTO_POSITION=1; START REPLICA"
wait_sync() { M $REP -e "SELECT WAIT_FOR_EXECUTED_GTID_SET('$(M $SRC -e 'select @@gtid_executed')', 900)"; }
wait_sync >/dev/null
UUID=$(M $SRC -e 'select @@server_uuid')
gno() { M "$1" -e 'select @@gtid_executed' | tr -d '\n' | tr ',' '\n' | grep "$UUID" | sed 's/.*[-:]//'; }

# 1. catch-up
M $REP -e 'STOP REPLICA'
before=$(gno $SRC)
src_tps=$($SB --threads=$THREADS --time=$SECS run | awk '/transactions:/ {gsub(/[(]/,"",$3); print $3}')
n=$(( $(gno $SRC) - before ))
t0=$(date +%s.%N)
M $REP -e 'START REPLICA'
if [ -n "${PERF:-}" ]; then  # where the replica's time goes while it catches up
  perf stat -e 'syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync,task-clock' \
    -p $RPID -- sleep 5 2>&1 | grep -E 'sys_enter|task-clock|elapsed' || true
  perf record -g -o "${PERF}" -p $RPID -- sleep 5 >/dev/null 2>&1 || true
fi
wait_sync >/dev/null
t1=$(date +%s.%N)
catch=$(echo "$n / ($t1 - $t0)" | bc -l)
printf 'catch-up: %d txns (source %.0f tps at %d threads) applied in %.2f s: %.0f txn/s\n' \
  "$n" "$src_tps" "$THREADS" "$(echo "$t1 - $t0" | bc -l)" "$catch"

# 2. live
$SB --threads=$THREADS --time=30 run >"$WORK/live.txt" &
LPID=$!
maxlag=0; i=0
while kill -0 $LPID 2>/dev/null; do
  sleep 1; i=$((i + 1))
  r=$(gno $REP)  # the replica first: the lag is never under the truth
  lag=$(( $(gno $SRC) - r ))
  sbs=$(mariadb -h127.0.0.1 -uroot --skip-ssl -B -P$REP -e 'SHOW REPLICA STATUS' |
    awk -F'\t' 'NR==1 {for (i=1;i<=NF;i++) if ($i=="Seconds_Behind_Source") c=i} NR==2 {print $c}')
  echo "t=${i}s lag=${lag} txns Seconds_Behind_Source=${sbs:-?}"
  if [ "$lag" -gt "$maxlag" ]; then maxlag=$lag; fi
done
wait $LPID || true
live_tps=$(awk '/transactions:/ {gsub(/[(]/,"",$3); print $3}' "$WORK/live.txt")
t0=$(date +%s.%N); wait_sync >/dev/null; t1=$(date +%s.%N)
after=$(echo "$t1 - $t0" | bc -l)
printf 'live: source %.0f tps, max lag %d txns, %.2f s to catch up after the load\n' \
  "$live_tps" "$maxlag" "$after"
printf 'RESULT threads=%d catchup_tps=%.0f src_tps=%.0f live_src_tps=%.0f max_lag=%d drain_s=%.2f\n' \
  "$THREADS" "$catch" "$src_tps" "$live_tps" "$maxlag" "$after"
