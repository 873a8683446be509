#!/usr/bin/env bash
# Install what the lockstep test suite needs, and only what is missing.
# Idempotent and non-interactive; run as root on Debian 12 (or with sudo).
#   apt: sysbench, mariadb-client (the `mariadb` CLI the tests script),
#        mariadb-server (reference server for side-by-side runs), python3
#   python (for whatever `python3` is first on PATH): pytest, PyMySQL
# Rust/cargo is expected to be present already (rustup); we only check it.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo -E"
fi

missing=()
need_pkg() { # need_pkg <package> <command-that-proves-it-is-there>
    if ! command -v "$2" >/dev/null 2>&1; then
        missing+=("$1")
    fi
}
need_pkg sysbench sysbench
need_pkg mariadb-client mariadb
need_pkg mariadb-server mariadbd
need_pkg python3 python3

fresh_server=0
if [ "${#missing[@]}" -gt 0 ]; then
    case " ${missing[*]} " in *" mariadb-server "*) fresh_server=1 ;; esac
    echo "install-deps: apt-get install ${missing[*]}"
    $SUDO apt-get update -q
    $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Debian starts the packaged mariadb on 127.0.0.1:3306 right after install,
# which is lockstep's default port. The tests start their own private
# mariadbd, so stop and disable the system service we just installed.
if [ "$fresh_server" = 1 ]; then
    if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
        $SUDO systemctl disable --now mariadb >/dev/null 2>&1 || true
    elif command -v service >/dev/null 2>&1; then
        $SUDO service mariadb stop >/dev/null 2>&1 || true
    fi
fi

# Python modules, for the python3 that will run pytest.
py_missing=()
python3 -c 'import pytest' >/dev/null 2>&1 || py_missing+=(pytest)
python3 -c 'import pymysql' >/dev/null 2>&1 || py_missing+=(pymysql)
# PyMySQL's caching_sha2_password RSA exchange (tests/test_tls.py).
python3 -c 'import cryptography' >/dev/null 2>&1 || py_missing+=(cryptography)
if [ "${#py_missing[@]}" -gt 0 ]; then
    echo "install-deps: python modules ${py_missing[*]}"
    if [ "$(command -v python3)" = /usr/bin/python3 ]; then
        # Debian's own python: prefer the distro packages.
        debs=()
        for m in "${py_missing[@]}"; do debs+=("python3-$m"); done
        $SUDO apt-get update -q
        $SUDO apt-get install -y -q --no-install-recommends "${debs[@]}"
    else
        # pyenv/venv python: use its pip.
        if ! python3 -m pip --version >/dev/null 2>&1; then
            python3 -m ensurepip --upgrade >/dev/null 2>&1 || true
        fi
        python3 -m pip install -q "${py_missing[@]}" 2>/dev/null \
            || python3 -m pip install -q --break-system-packages "${py_missing[@]}"
    fi
fi
# Connector/Python's pure-Python protocol (tests/test_drivers.py, compression);
# optional: the test is skipped without it.
python3 -c 'import mysql.connector' >/dev/null 2>&1 \
    || python3 -m pip install -q mysql-connector-python >/dev/null 2>&1 \
    || echo "install-deps: mysql-connector-python not installed (its test is skipped)"
python3 -c 'import pytest, pymysql, cryptography' || { echo "install-deps: python modules still missing" >&2; exit 1; }

if ! command -v cargo >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
    echo "install-deps: cargo not found; install Rust with rustup (https://rustup.rs)" >&2
    exit 1
fi
# scripts/test.sh checks formatting and lints before it builds.
[ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    rustup component add rustfmt clippy
fi
echo "install-deps: ok (sysbench $(sysbench --version | awk '{print $2}'), $(mariadb --version | awk '{print $1, $2, $3, $5}' | tr -d ,), python $(python3 -c 'import sys; print(sys.version.split()[0])'))"
