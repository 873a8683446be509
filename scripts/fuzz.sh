#!/usr/bin/env bash
# Build the cargo-fuzz targets (crates/fuzz/) and run each one briefly from its
# committed seeds. A crash fails the run; the input is left under
# crates/fuzz/artifacts/<target>/ (reproduce: cargo +nightly fuzz run <target> <file>).
#
#   bash scripts/fuzz.sh                    # every target, 40 s each
#   LOCKSTEP_FUZZ_SECONDS=600 bash scripts/fuzz.sh sql_session
#
# Builds without a sanitizer but with debug assertions (overflow checks):
# the code under test has no unsafe, and ASan builds take too long on small
# machines.
set -euo pipefail

cd "$(dirname "$0")/.."
[ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
seconds="${LOCKSTEP_FUZZ_SECONDS:-40}"

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

cd crates/fuzz
flags=(-s none --debug-assertions --fuzz-dir .)
cargo +nightly fuzz build "${flags[@]}"
targets=("$@")
[ ${#targets[@]} -eq 0 ] && mapfile -t targets < <(cargo +nightly fuzz list --fuzz-dir .)
# What a run discovers goes to a scratch corpus; only the seeds are committed.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch" /tmp/lockstep-fuzz-*' EXIT
for t in "${targets[@]}"; do
    echo "---- fuzz $t for ${seconds}s"
    mkdir -p "$scratch/$t"
    # Seeds: the target's own, else (for SQL targets) the shared SQL seeds. A
    # missing directory would make libFuzzer refuse to start.
    seeds="corpus/$t"
    [ -d "$seeds" ] || { [[ "$t" == sql_* ]] && seeds="corpus/sql_session"; }
    [ -d "$seeds" ] || mkdir -p "$seeds"
    dict=()
    [ -f "dict/$t.dict" ] && dict=("-dict=dict/$t.dict")
    # The SQL targets share the SQL dictionary.
    [ ${#dict[@]} -eq 0 ] && [[ "$t" == sql_* ]] && dict=("-dict=dict/sql_session.dict")
    set +e
    cargo +nightly fuzz run "${flags[@]}" "$t" "$scratch/$t" "$seeds" -- \
        -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 "${dict[@]}" >"$scratch/$t.log" 2>&1
    status=$?
    set -e
    grep -E "^(Done|stat::number_of_executed_units|==[0-9]+==|SUMMARY|thread .* panicked|Failing input|.*artifact|ERROR)" "$scratch/$t.log" || true
    if [ "$status" -ne 0 ]; then
        # Whatever the cause (a crash, or libFuzzer refusing to start), show it.
        tail -n 40 "$scratch/$t.log"
        echo "fuzz target $t failed; see crates/fuzz/artifacts/$t/"
        exit 1
    fi
done
