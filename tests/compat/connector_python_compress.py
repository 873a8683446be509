"""Connector/Python's suite again with compress=True on every connection."""

import connector_python
from connector_python import VERSION, prepare  # noqa: F401  (suite interface)

NAME = "connector-python-compress"
QUICK = False


def run(target, cache, outdir):
    connector_python.COMPRESS = True
    try:
        return connector_python.run(target, cache, outdir)
    finally:
        connector_python.COMPRESS = False
