"""go-sql-driver/mysql's own `go test` suite, from the Go module proxy."""

import json
import os
import re
import shutil

import common

NAME = "go-sql-driver"
VERSION = "v1.9.3"
QUICK = True
MODULE = "github.com/go-sql-driver/mysql"
# TestConnectorReturnsTimeout dials 1.1.1.1 (outside); nothing else in the
# suite leaves 127.0.0.1 (dsn_test.go's other addresses are only parsed).
SKIP = "^TestConnectorReturnsTimeout$"


def _gopath_env(cache):
    # A private module cache and build cache keep us off the user's.
    return {"GOMODCACHE": os.path.join(cache, "gomod"),
            "GOCACHE": os.path.join(cache, "gobuild"), "GOFLAGS": "-mod=mod",
            "GOTOOLCHAIN": "local"}


def _src(cache):
    return os.path.join(cache, f"go-mysql-{VERSION}")


def prepare(cache):
    src = _src(cache)
    if os.path.isdir(src):
        return
    env = common.env_with(**_gopath_env(cache))
    info = json.loads(common.must(["go", "mod", "download", "-json", f"{MODULE}@{VERSION}"],
                                  env=env, cwd=cache))
    # The module cache is read-only; tests run in a writable copy.
    shutil.copytree(info["Dir"], src + ".tmp", dirs_exist_ok=True)
    for root, dirs, files in os.walk(src + ".tmp"):
        for n in dirs + files:
            os.chmod(os.path.join(root, n), 0o755)
    common.must(["go", "mod", "download"], env=env, cwd=src + ".tmp")
    common.must(["go", "test", "-count=1", "-run", "^$", "."], env=env, cwd=src + ".tmp")
    os.rename(src + ".tmp", src)


def parse(text):
    """Per-test results from `go test -json`; subtests fold into their test."""
    results, output = {}, {}
    for line in text.splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        test = ev.get("Test")
        if not test:
            continue
        top = test.split("/")[0]
        if ev["Action"] == "output":
            output.setdefault(top, []).append(ev["Output"])
        elif ev["Action"] in ("pass", "fail", "skip") and "/" not in test:
            status = ev["Action"]
            msg = "".join(o.strip() + " " for o in output.get(top, [])
                          if not o.lstrip().startswith(("=== ", "--- PASS", "--- SKIP")))
            results[top] = (status, msg.strip()[:500] if status != "pass" else "")
    return results


def hung_tests(text):
    """Tests running when `go test -timeout` fired (a hang)."""
    m = re.search(r"running tests:\n((?:\t.*\n?)+)", text.replace("\\n", "\n").replace("\\t", "\t"))
    return re.findall(r"\t(\w+)", m.group(1)) if m else []


def run(target, cache, outdir):
    env = common.env_with(MYSQL_TEST_ADDR=f"{target.host}:{target.port}", MYSQL_TEST_USER="root",
                          MYSQL_TEST_PASS="", MYSQL_TEST_DBNAME="gotest",
                          **_gopath_env(cache))
    limit = common.SUITE_TIMEOUT
    cmd = ["go", "test", "-json", "-count=1", f"-timeout={limit - 60}s", "-skip", SKIP, "."]
    code, text = common.run(cmd, limit, cwd=_src(cache), env=env,
                            out=os.path.join(outdir, "output.txt"))
    results = parse(text)
    for t in hung_tests(text):
        results[t] = ("fail", "hang: still running when go test -timeout fired")
    results.update(common.hung_result(text, code))
    return results, " ".join(cmd)
