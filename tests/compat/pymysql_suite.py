"""PyMySQL's own unittest suite. 0.10.1 is the newest PyMySQL whose PyPI
sdist still ships pymysql/tests (1.x sdists carry only tests/test_auth.py)."""

import glob
import json
import os
import sys

import common

NAME = "pymysql"
VERSION = "0.10.1"
QUICK = True
# Modules of the suite; test_auth (tests/) needs server-side auth plugins set
# up by PyMySQL's CI, so it is left out.
MODULES = ["pymysql.tests"]


def _src(cache):
    return common.only_child(os.path.join(cache, f"pymysql-{VERSION}"))


def prepare(cache):
    dl = os.path.join(cache, "dl")
    if not glob.glob(os.path.join(dl, f"PyMySQL-{VERSION}.tar.gz")):
        common.must([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                     "--no-binary", ":all:", "-d", dl, f"PyMySQL=={VERSION}"])
    common.extract(os.path.join(dl, f"PyMySQL-{VERSION}.tar.gz"),
                   os.path.join(cache, f"pymysql-{VERSION}"))


def _configure(src, target):
    # The suite's documented way to point it at a server: databases.json.
    base = {"host": target.host, "port": target.port, "user": "root", "passwd": ""}
    dbs = [dict(base, db="test1", use_unicode=True, local_infile=True), dict(base, db="test2")]
    with open(os.path.join(src, "pymysql", "tests", "databases.json"), "w") as f:
        json.dump(dbs, f)


def run(target, cache, outdir):
    src = _src(cache)
    _configure(src, target)
    return run_wrapped(src, outdir, ["--names"] + MODULES, env={"PYTHONPATH": src})


def run_wrapped(cwd, outdir, args, env):
    """Run pyunit_wrap.py in cwd; return (results, command)."""
    out = os.path.join(outdir, "results.jsonl")
    if os.path.exists(out):
        os.remove(out)
    cmd = [sys.executable, os.path.join(common.HERE, "pyunit_wrap.py"), out,
           str(common.TEST_TIMEOUT)] + args
    code, text = common.run(cmd, common.SUITE_TIMEOUT, cwd=cwd, env=common.env_with(**env),
                            out=os.path.join(outdir, "output.txt"))
    results = common.hung_result(text, code)
    if os.path.exists(out):
        with open(out) as f:
            for line in f:
                r = json.loads(line)
                # A failure beats an earlier pass (subtests, tearDown errors).
                if results.get(r["name"], ("",))[0] != "fail":
                    results[r["name"]] = (r["status"], r["message"])
    if not results:
        results["(run)"] = ("fail", f"no test ran (exit {code}): {text[-300:]!r}")
    return results, " ".join(cmd[1:2] + args)
