"""SQLAlchemy's own dialect compliance suite (test/dialect/test_suite.py)
through its mysql+pymysql dialect. The sdist from PyPI carries lib/ and
test/ and runs from its source tree; pytest counts come from the JUnit XML.
Slow (minutes per server): not part of the quick gate."""

import os
import re
import sys
import xml.etree.ElementTree as ET

import common
import pymysql

NAME = "sqlalchemy"
VERSION = "2.0.36"
QUICK = False
# The suite's schemas besides the database of the URL.
SCHEMAS = ("test", "test_schema", "test_schema_2")


def _src(cache):
    return common.only_child(os.path.join(cache, f"sqlalchemy-{VERSION}"))


def prepare(cache):
    dl = os.path.join(cache, "dl")
    sdist = os.path.join(dl, f"sqlalchemy-{VERSION}.tar.gz")
    if not os.path.exists(sdist):
        common.must([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                     "--no-binary", ":all:", "-d", dl, f"SQLAlchemy=={VERSION}"])
    common.extract(sdist, os.path.join(cache, f"sqlalchemy-{VERSION}"))
    try:
        import pytest  # noqa: F401
    except ImportError:
        common.must([sys.executable, "-m", "pip", "install", "-q", "pytest"])


def _create_schemas(target):
    conn = pymysql.connect(host=target.host, port=target.port, user="root", password="")
    with conn.cursor() as cur:
        for db in SCHEMAS:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS {db}")
    conn.close()


def parse_junit(path):
    """(status, message) per test case: failure and error are fails."""
    results = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        # The class names carry the server version the dialect detected
        # (_mysql+pymysql_8_0_36, _mariadb+pymysql_10_11_19_0): dropped, so
        # both servers' names match.
        cls = re.sub(r"_(mysql|mariadb)\+pymysql_[\d_]+$", "", case.get("classname", ""))
        name = f"{cls}.{case.get('name', '')}"
        status, message = "pass", ""
        for child in case:
            if child.tag in ("failure", "error"):
                status, message = "fail", (child.get("message") or child.text or "")[:500]
                break
            if child.tag == "skipped":
                status, message = "skip", (child.get("message") or "")[:300]
        results[name] = (status, message)
    return results


def run(target, cache, outdir):
    src = _src(cache)
    _create_schemas(target)
    xml = os.path.join(outdir, "junit.xml")
    if os.path.exists(xml):
        os.remove(xml)
    url = f"mysql+pymysql://root@{target.host}:{target.port}/test"
    cmd = [sys.executable, "-m", "pytest", "test/dialect/test_suite.py", "--dburi", url,
           "-p", "no:cacheprovider", "-q", f"--junitxml={xml}", "--maxfail=100000"]
    code, text = common.run(cmd, common.SUITE_TIMEOUT, cwd=src,
                            env=common.env_with(PYTHONPATH="lib"),
                            out=os.path.join(outdir, "output.txt"))
    results = common.hung_result(text, code)
    if os.path.exists(xml):
        results.update(parse_junit(xml))
    if not results:
        results["(run)"] = ("fail", f"no test ran (exit {code}): {text[-300:]!r}")
    shown = " ".join(cmd[1:]).replace(url, "mysql+pymysql://root@HOST:PORT/test")
    return results, f"PYTHONPATH=lib python3 {shown}"
