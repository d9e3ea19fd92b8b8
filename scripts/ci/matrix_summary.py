#!/usr/bin/env python3
"""matrix_summary.py: the markdown tables of results/mpi_matrix/README.md from the CSVs of mpi_matrix.sh and outside_suites.sh."""
# usage: scripts/ci/matrix_summary.py FILE.csv...
# Prints (1) the smoke checks as a table MPI x check (pass / FAIL / n/a), (2) per suite and MPI
# the counts of pass, fail and n/a, (3) every fail and n/a row with its reason, grouped.
import csv
import sys
from collections import OrderedDict, defaultdict


def main(paths):
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            rows += list(csv.DictReader(f))
    smoke = [r for r in rows if r["suite"] == "matrix_smoke"]
    if smoke:
        checks = list(OrderedDict.fromkeys(r["test"] for r in smoke))
        mpis = list(OrderedDict.fromkeys(r["MPI"] for r in smoke))
        cell = {(r["MPI"], r["test"]): r["result"] for r in smoke}
        print("| MPI | " + " | ".join(checks) + " |")
        print("|---" * (len(checks) + 1) + "|")
        for m in mpis:
            marks = {"pass": "pass", "fail": "**FAIL**", "n/a": "n/a"}
            print(f"| {m} | " + " | ".join(marks.get(cell.get((m, c), ""), "-") for c in checks) + " |")
        print()
    counts = defaultdict(lambda: defaultdict(int))
    for r in rows:
        counts[(r["suite"], r["MPI"])][r["result"]] += 1
    print("| suite | MPI | pass | fail | n/a |")
    print("|---|---|---|---|---|")
    for (suite, mpi), c in counts.items():
        print(f"| {suite} | {mpi} | {c['pass']} | {c['fail']} | {c['n/a']} |")
    print()
    for result in ("fail", "n/a"):
        bad = [r for r in rows if r["result"] == result]
        if not bad:
            continue
        print(f"{result}:")
        grouped = OrderedDict()
        for r in bad:
            grouped.setdefault((r["suite"], r["test"], r["MPI"]), []).append(r)
        for (suite, test, mpi), rs in grouped.items():
            ranks = ",".join(r["ranks"] for r in rs)
            print(f"- {suite} {test} ({mpi}, ranks {ranks}): {rs[0]['reason']}")
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
