"""Rust `mysql` crate: our own check program (crates/compat-rust-mysql/, its own
Cargo project and target dir, outside the main workspace)."""

import os

import common

NAME = "rust-mysql"
VERSION = "25.0.1"
QUICK = False
PROJECT = os.path.join(common.REPO, "crates", "compat-rust-mysql")
TARGET_DIR = os.path.join(common.REPO, "target", "compat-rust")
BIN = os.path.join(TARGET_DIR, "release", "lockstep-mysql-crate-check")


def prepare(cache):
    # Cargo.lock beside Cargo.toml pins the crate's own dependencies too.
    common.must(["cargo", "build", "--release", "--manifest-path",
                 os.path.join(PROJECT, "Cargo.toml"), "--target-dir", TARGET_DIR, "--locked"],
                timeout=1500, env=common.env_with(CARGO_BUILD_JOBS="2"))


def run(target, cache, outdir):
    cmd = [BIN, target.host, str(target.port)]
    code, text = common.run(cmd, common.SUITE_TIMEOUT, out=os.path.join(outdir, "output.txt"))
    results = common.parse_marked_lines(text)
    results.update(common.hung_result(text, code))
    if not results:
        results["(run)"] = ("fail", f"no test ran (exit {code}): {text[-400:]!r}")
    return results, "crates/compat-rust-mysql (cargo run --release -- HOST PORT)"
