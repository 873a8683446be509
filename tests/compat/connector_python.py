"""MySQL Connector/Python's own suite (unittests.py, pure-Python protocol;
the sdist ships lib/ and tests/), against an external server."""

import os
import sys

import common
import pymysql_suite

NAME = "connector-python"
VERSION = "9.5.0"
QUICK = False
COMPRESS = False
SDIST = f"mysql_connector_python-{VERSION}.tar.gz"


def _src(cache):
    return common.only_child(os.path.join(cache, f"connector-python-{VERSION}"))


def prepare(cache):
    dl = os.path.join(cache, "dl")
    if not os.path.exists(os.path.join(dl, SDIST)):
        common.must([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                     "--no-binary", ":all:", "-d", dl, f"mysql-connector-python=={VERSION}"])
    common.extract(os.path.join(dl, SDIST), os.path.join(cache, f"connector-python-{VERSION}"))


def run(target, cache, outdir):
    src = _src(cache)
    args = ["--script", os.path.join(common.HERE, "cpy_bootstrap.py"), target.host,
            str(target.port)] + (["--compress"] if COMPRESS else [])
    # The suite must import the sdist's lib/, not an installed copy.
    results, cmd = pymysql_suite.run_wrapped(src, outdir, args, env={"PYTHONPATH": src + "/lib"})
    return results, cmd
