"""Why a test fails on lockstep: ordered rules (suite, test-name regex,
message regex) -> (category, cause). First match wins."""

import re

# Filled in from the failures of real runs; see docs/compatibility.md.
RULES = [
]


def classify(suite, name, message, on_mariadb):
    for r_suite, r_name, r_msg, cat, cause in RULES:
        if r_suite not in ("*", suite):
            continue
        if re.search(r_name, name) and re.search(r_msg, message, re.S):
            return cat, cause
    if on_mariadb == "fail":
        return "a", "fails on MariaDB too: expects MySQL 8 behaviour"
    return "b", "unclassified lockstep gap"
