#!/usr/bin/env bash
# Run every lockstep test: dependencies, release build, Rust unit tests, then
# the end-to-end pytest suite (mariadb CLI, SQL, isolation, sysbench, crash).
#
#   bash scripts/test.sh                 # quick suite (CI default)
#   LOCKSTEP_SUITE=full bash scripts/test.sh
#   LOCKSTEP_TARGET=mariadb bash scripts/test.sh   # e2e suite against MariaDB
#
# Environment:
#   LOCKSTEP_SUITE=quick|full   size of sysbench/crash tests (default quick)
#   LOCKSTEP_TARGET=lockstep|mariadb  server the e2e tests start (default lockstep)
#   LOCKSTEP_SKIP_DEPS=1        don't run scripts/install-deps.sh
#   LOCKSTEP_SKIP_CARGO=1       don't build or run the Rust unit tests (nor fuzz)
#   LOCKSTEP_SKIP_FUZZ=1        don't build and run the fuzz targets (scripts/fuzz.sh)
#   LOCKSTEP_FUZZ_SECONDS=N     seconds per fuzz target (default 40)
#   PYTEST_ARGS="..."           extra pytest arguments (e.g. "-k sysbench -x")
#   LOCKSTEP_SKIP_COMPAT=1      don't run the driver compatibility gate (scripts/compat.sh quick)
set -euo pipefail

cd "$(dirname "$0")/.."
export LOCKSTEP_SUITE="${LOCKSTEP_SUITE:-quick}"
export LOCKSTEP_TARGET="${LOCKSTEP_TARGET:-lockstep}"
[ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"

step() { echo; echo "==== $* ($(date +%T))"; }
start=$(date +%s)

if [ "${LOCKSTEP_SKIP_DEPS:-0}" != 1 ]; then
    step "install dependencies"
    bash scripts/install-deps.sh
fi

if [ "${LOCKSTEP_SKIP_CARGO:-0}" != 1 ]; then
    step "cargo fmt --check, cargo clippy -D warnings"
    cargo fmt --check
    cargo clippy --release --workspace --all-targets -- -D warnings
    step "cargo build --release -p lockstep-server"
    cargo build --release -p lockstep-server -p lockstep-workload
    step "cargo test --workspace --release"
    cargo test --workspace --release
    if [ "${LOCKSTEP_SKIP_FUZZ:-0}" != 1 ]; then
        step "fuzz targets, ${LOCKSTEP_FUZZ_SECONDS:-40}s each"
        bash scripts/fuzz.sh
    fi
fi

step "pytest tests (target=$LOCKSTEP_TARGET suite=$LOCKSTEP_SUITE)"
# shellcheck disable=SC2086
python3 -m pytest tests -q --durations=10 ${PYTEST_ARGS:-}

if [ "${LOCKSTEP_SKIP_COMPAT:-0}" != 1 ] && [ "$LOCKSTEP_TARGET" = lockstep ]; then
    step "driver compatibility gate (scripts/compat.sh quick)"
    bash scripts/compat.sh quick
fi

step "all tests passed in $(( $(date +%s) - start ))s"
