"""Run a third-party unittest suite with a per-test time limit and record
every outcome as a JSON line (so a killed run still leaves its results).

    python3 pyunit_wrap.py OUT.jsonl TIMEOUT --names MOD...
    python3 pyunit_wrap.py OUT.jsonl TIMEOUT --script FILE ARGS...

--names loads and runs the given test modules; --script runs a suite's own
start-up (e.g. cpy_bootstrap.py) with its own argv.
"""

import json
import os
import runpy
import signal
import sys
import threading
import time
import traceback
import unittest

OUT, LIMIT = sys.argv[1], int(sys.argv[2])
_out = open(OUT, "a", buffering=1)


class TestHung(Exception):
    """Raised in a test that ran past the limit: a hang becomes a failure."""


def _alarm(signum, frame):
    raise TestHung(f"test ran longer than {LIMIT}s (hang)")


_last = [time.monotonic()]


def _watchdog():
    """Interrupt the main thread when nothing has finished for too long:
    class fixtures (setUpClass/tearDownClass) run outside the per-test alarm."""
    while True:
        time.sleep(5)
        if time.monotonic() - _last[0] > LIMIT + 15:
            _last[0] = time.monotonic()
            signal.pthread_kill(threading.main_thread().ident, signal.SIGALRM)


def _emit(test, status, err=None):
    _last[0] = time.monotonic()
    msg = ""
    if isinstance(err, tuple):
        exc = err[1]
        # PyMySQL's suite calls pytest.skip(), which plain unittest sees as an error.
        if type(exc).__name__ == "Skipped" and not isinstance(exc, Exception):
            status = "skip"
        msg = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    elif err:
        msg = str(err)
    _out.write(json.dumps({"name": test.id(), "status": status, "message": msg[:500]}) + "\n")


def _patch_results():
    R = unittest.TestResult
    orig = {n: getattr(R, n) for n in ("addSuccess", "addFailure", "addError", "addSkip",
                                       "addExpectedFailure", "addUnexpectedSuccess",
                                       "addSubTest")}

    def wrap(name, status):
        def f(self, test, *rest):
            if name == "addSubTest":
                if rest[1] is not None:  # a failing subtest fails its test
                    _emit(test, "fail", rest[1])
            else:
                _emit(test, status, rest[0] if rest else None)
            return orig[name](self, test, *rest)
        return f

    R.addSuccess = wrap("addSuccess", "pass")
    R.addFailure = wrap("addFailure", "fail")
    R.addError = wrap("addError", "fail")
    R.addSkip = wrap("addSkip", "skip")
    R.addExpectedFailure = wrap("addExpectedFailure", "pass")
    R.addUnexpectedSuccess = wrap("addUnexpectedSuccess", "fail")
    R.addSubTest = wrap("addSubTest", None)


def _patch_timeout():
    run = unittest.TestCase.run

    def timed(self, result=None):
        _last[0] = time.monotonic()
        signal.alarm(LIMIT)
        try:
            return run(self, result)
        finally:
            signal.alarm(0)

    unittest.TestCase.run = timed
    signal.signal(signal.SIGALRM, _alarm)
    threading.Thread(target=_watchdog, daemon=True).start()


def main():
    args = sys.argv[3:]
    _patch_results()
    _patch_timeout()
    if args[0] == "--names":
        suite = unittest.defaultTestLoader.loadTestsFromNames(args[1:])
        ok = unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful()
        sys.exit(0 if ok else 1)
    sys.argv = args[1:]  # FILE ARGS..., as if run directly
    sys.path.insert(0, os.path.dirname(os.path.abspath(args[1])))
    runpy.run_path(args[1], run_name="__main__")


if __name__ == "__main__":
    main()
