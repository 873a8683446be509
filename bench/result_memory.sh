#!/usr/bin/env bash
# Server memory while several clients read a large table at once: a
# result set built whole costs its size per reader, a streamed one a batch.
#
#   bash bench/result_memory.sh BINARY [PORT] [ROWS] [READERS]
#
# Loads ROWS rows of ~1 kB (default 250,000: ~250 MB) into a fresh server,
# then READERS (default 6) `mariadb` clients run SELECT * at once; prints
# the server's RSS after the load and its peak while they read (sampled
# every 100 ms), and how long the readers took.
set -euo pipefail
BIN=${1:?binary}; PORT=${2:-4610}; ROWS=${3:-250000}; READERS=${4:-6}
D=$(mktemp -d /tmp/resultmem.XXXX)
"$BIN" serve --port "$PORT" --datadir "$D/data" >"$D/server.log" 2>&1 & PID=$!
trap 'kill -9 $PID 2>/dev/null || true; rm -rf "$D"' EXIT
M() { mariadb -h127.0.0.1 -P"$PORT" -uroot --skip-ssl -N "$@"; }
for _ in $(seq 150); do M -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
M -e "CREATE DATABASE m; CREATE TABLE m.t (id INT PRIMARY KEY, pad VARCHAR(1100));
  SET SESSION cte_max_recursion_depth = $((ROWS + 1));
  INSERT INTO m.t WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < $ROWS)
  SELECT n, REPEAT('x', 1000) FROM c"
rss() { awk '/VmRSS/{print int($2/1024)}' "/proc/$PID/status"; }
echo "rss after load: $(rss) MB"
peak=0; readers=()
t0=$(date +%s.%N)
for _ in $(seq "$READERS"); do M m -e "SELECT * FROM t" >/dev/null & readers+=($!); done
while kill -0 "${readers[@]}" 2>/dev/null; do
  r=$(rss); [ "$r" -gt "$peak" ] && peak=$r; sleep 0.1
done
failed=0
for p in "${readers[@]}"; do wait "$p" || failed=$((failed + 1)); done
echo "peak rss during $READERS readers: $peak MB; took $(echo "$(date +%s.%N) - $t0" | bc) s; failed readers: $failed"
