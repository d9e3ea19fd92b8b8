#!/usr/bin/python3
"""error_vs_n_table.py: the Markdown tables of error against rank count from the CSV of scripts/study/error_vs_n.sh.

usage: scripts/study/error_vs_n_table.py CSV > MD

Rows of the CSV: np,count,data,label,rel_l2,max_abs,zeroed,nonfinite,r_min,r_max,ranks_differ with
label FORMAT/ALGORITHM (mpi/- : no library); a later row of the same (np, data, label) replaces an
earlier one. Prints, per data set, one row per format and algorithm and one column per rank count;
normal data: the relative L2 error and the ratio of the error at 64 ranks to that at 2 (target of
issue 9: at most 1.3); all-ones: the value every rank received (exact: the rank count).
"""
import csv
import sys

FORMAT_ORDER = ["mpi", "fp16", "bf16", "e5m7", "e5m2", "e4m3", "e4m3ieee", "e3m2", "e2m1"]
ALG_NAMES = {"ring": "ring (old)", "rsag": "rsag (new)", "twolevel": "two-level", "-": "-"}


def load(path):
    cells, nps, keys, counts = {}, set(), [], {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            np_ = int(row["np"])
            label = row["label"]
            fmt, alg = label.split("/", 1) if "/" in label else (label, "-")
            data = row["data"]
            if data.startswith("failed"):
                for d in ("normal", "ones"):
                    cells[(np_, d, fmt, alg)] = {"failed": data}
            else:
                cells[(np_, data, fmt, alg)] = row
            counts.setdefault(np_, set()).add(row["count"])
            nps.add(np_)
            if (fmt, alg) not in keys:
                keys.append((fmt, alg))
    keys.sort(key=lambda k: (FORMAT_ORDER.index(k[0]) if k[0] in FORMAT_ORDER else 99, k[0], k[1]))
    return cells, sorted(nps), keys, counts


def normal_cell(row):
    if row is None:
        return ""
    if "failed" in row:
        return row["failed"]
    text = "%.3g%%" % (100 * float(row["rel_l2"])) if float(row["rel_l2"]) >= 1e-5 else "%.2g" % float(row["rel_l2"])
    extras = []
    if float(row["zeroed"]) >= 0.001:
        extras.append("%.1f%% zero" % (100 * float(row["zeroed"])))
    if float(row["nonfinite"]) > 0:
        extras.append("%s inf/NaN" % row["nonfinite"])
    if row["ranks_differ"] == "1":
        extras.append("ranks differ")
    return text + (" (" + ", ".join(extras) + ")" if extras else "")


def ones_cell(row, np_):
    if row is None:
        return ""
    if "failed" in row:
        return row["failed"]
    lo, hi = float(row["r_min"]), float(row["r_max"])
    if float(row["max_abs"]) == 0 and row["ranks_differ"] != "1":
        return "exact"
    text = "%g" % lo if lo == hi else "%g..%g" % (lo, hi)
    if float(row["nonfinite"]) > 0:
        text += " (%s inf/NaN)" % row["nonfinite"]
    if row["ranks_differ"] == "1":
        text += " (ranks differ)"
    return "**" + text + "**"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    cells, nps, keys, counts = load(sys.argv[1])
    hdr = "| format | algorithm | " + " | ".join("np=%d" % n for n in nps)
    print("# Error of the float allreduce against the number of ranks")
    print()
    print("Floats per rank: " + ", ".join("np=%d: %s" % (n, "/".join(sorted(counts[n]))) for n in nps) + ".")
    print()
    print("## Normal data: relative L2 error ||r - ref||_2 / ||ref||_2 (worst rank)")
    print()
    print("With the share of elements that came back exactly 0 when it is 0.1% or more.")
    print()
    print(hdr + " | np=64 / np=2 |")
    print("|---|---|" + "---:|" * (len(nps) + 1))
    for fmt, alg in keys:
        row = [normal_cell(cells.get((n, "normal", fmt, alg))) for n in nps]
        ratio = ""
        a, b = cells.get((2, "normal", fmt, alg)), cells.get((64, "normal", fmt, alg))
        if a and b and "failed" not in a and "failed" not in b and float(a["rel_l2"]) > 0:
            ratio = "%.2f" % (float(b["rel_l2"]) / float(a["rel_l2"]))
        print("| %s | %s | %s | %s |" % (fmt, ALG_NAMES.get(alg, alg), " | ".join(row), ratio))
    print()
    print("## All-ones: the value returned (exact answer: the rank count)")
    print()
    print(hdr + " |")
    print("|---|---|" + "---:|" * len(nps))
    for fmt, alg in keys:
        row = [ones_cell(cells.get((n, "ones", fmt, alg)), n) for n in nps]
        print("| %s | %s | %s |" % (fmt, ALG_NAMES.get(alg, alg), " | ".join(row)))


if __name__ == "__main__":
    main()
