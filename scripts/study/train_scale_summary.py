#!/usr/bin/python3
"""train_scale_summary.py: the table and plot of scripts/study/train_scale.sh: final test accuracy of each format and algorithm against FP32 of the same seed, per rank count.

usage: scripts/study/train_scale_summary.py [--command TEXT] [--intro FILE] [--plot PNG] RUNS_DIR > README.md

RUNS_DIR holds seedK/npN-NAME.csv (one row per epoch, from apps/apsmpi_train --csv) and
seedK/npN-NAME.rc (the run's exit status); NAME is fp32 or FORMAT-ALGORITHM. For every rank
count, format and algorithm: the seeds that finished, the mean final test accuracy, and its
difference from the FP32 run of the same seed (mean, standard error, smallest and largest);
"within 2 s.e." says whether the mean difference is within two standard errors of 0. --intro:
a Markdown file printed after the title (what this study's runs were, written by hand). With
--plot, a PNG (gnuplot) of the mean difference against the rank count, with +-1 s.e. bars.
"""
import argparse
import glob
import math
import os
import re
import subprocess
import sys

from train_summary import final_row, mean_se, print_head

FORMAT_ORDER = ["fp32", "fp16", "bf16", "e5m2", "e4m3", "mxfp8", "mxfp8e5m2", "e3m2", "mxfp6", "mxfp6e2m3", "e2m1",
                "mxfp4", "mxfp4+ef"]
ALG_NAMES = {"ring": "ring (old)", "rsag": "rsag (new)"}


def final_acc(csv_path):
    """(final test accuracy, diverged) of one run, or None."""
    try:
        res = final_row(csv_path)
    except (OSError, StopIteration, ValueError):
        return None
    return None if res is None else (res[0], res[1] is not None or res[0] <= 15.0)


def load(runs_dir):
    """{(np, name): {seed: (acc, diverged)}} of the runs whose .rc is 0; and the failed count."""
    runs, failed = {}, {}
    for rc_path in glob.glob(os.path.join(runs_dir, "seed*", "np*-*.rc")):
        seed = int(re.search(r"seed(\d+)$", os.path.dirname(rc_path)).group(1))
        np_, name = os.path.basename(rc_path)[2:-3].split("-", 1)
        key = (int(np_), name)
        res = None
        if open(rc_path).read().strip() == "0":
            res = final_acc(rc_path[:-3] + ".csv")
        if res is None:
            failed[key] = failed.get(key, 0) + 1
            continue
        runs.setdefault(key, {})[seed] = res
    return runs, failed


def order(key):
    np_, name = key
    fmt, alg = (name, "") if name == "fp32" else name.rsplit("-", 1)
    return (np_, FORMAT_ORDER.index(fmt) if fmt in FORMAT_ORDER else 99, fmt, alg)


def table(runs, failed):
    """The Markdown rows, and the plot points {(fmt, alg): [(np, mean, se)]}."""
    lines = ["| ranks | format | algorithm | seeds | test acc % (mean) | vs FP32 same seed, pp: mean ± s.e. "
             "| min .. max | within 2 s.e. of 0 | diverged |",
             "| ---: | --- | --- | ---: | ---: | ---: | ---: | --- | ---: |"]
    points = {}
    for key in sorted(set(runs) | set(failed), key=order):
        np_, name = key
        got = runs.get(key, {})
        nfail = failed.get(key, 0)
        seeds_cell = "%d" % len(got) + (" (%d failed)" % nfail if nfail else "")
        if not got:
            lines.append("| %d | %s | | %s | failed | | | | |" % (np_, name, seeds_cell))
            continue
        accs = [a for a, _ in got.values()]
        div = sum(d for _, d in got.values())
        if name == "fp32":
            m, se, sd = mean_se(accs)
            lines.append("| %d | fp32 | — | %s | %.2f | seed-to-seed s.d. %.2f | %.2f .. %.2f (acc) | — | %d/%d |"
                         % (np_, seeds_cell, m, sd, min(accs), max(accs), div, len(accs)))
            continue
        fmt, alg = name.rsplit("-", 1)
        base = runs.get((np_, "fp32"), {})
        deltas = [got[s][0] - base[s][0] for s in sorted(got) if s in base]
        if not deltas:
            lines.append("| %d | %s | %s | %s | %.2f | no FP32 run | | | %d/%d |"
                         % (np_, fmt, ALG_NAMES.get(alg, alg), seeds_cell, sum(accs) / len(accs), div, len(accs)))
            continue
        m, se, _ = mean_se(deltas)
        within = "—" if math.isnan(se) else ("yes" if abs(m) <= 2 * se else "no")
        lines.append("| %d | %s | %s | %s | %.2f | %+.2f ± %.2f | %+.2f .. %+.2f | %s | %d/%d |"
                     % (np_, fmt, ALG_NAMES.get(alg, alg), seeds_cell, sum(accs) / len(accs), m,
                        0.0 if math.isnan(se) else se, min(deltas), max(deltas), within, div, len(accs)))
        points.setdefault((fmt, alg), []).append((np_, m, 0.0 if math.isnan(se) else se))
    return lines, points


def plot(points, png, title):
    """Mean difference from FP32 against the rank count: one line per format and algorithm."""
    if not points:
        return
    dat = os.path.splitext(png)[0] + ".dat"
    colors = {"e4m3": "#1f77b4", "e3m2": "#d62728", "e2m1": "#2ca02c", "e5m2": "#ff7f0e", "fp16": "#9467bd",
              "mxfp8": "#17becf", "mxfp6": "#e377c2", "mxfp4": "#8c564b", "mxfp4+ef": "#bcbd22"}
    plots = []
    # the y range holds every point within 10 pp of FP32; collapsed runs fall below it (said in the key)
    near = [(m - se, m + se) for pts in points.values() for _, m, se in pts if m > -10]
    lo = min([a for a, _ in near] + [-1.0]) - 0.3
    hi = max([b for _, b in near] + [1.0]) + 0.3
    with open(dat, "w") as f:
        for i, ((fmt, alg), pts) in enumerate(sorted(points.items())):
            f.write("# %s %s\n" % (fmt, alg))
            for np_, m, se in sorted(pts):
                f.write("%d %.4f %.4f\n" % (np_, m, se))
            f.write("\n\n")
            dash = 1 if alg == "rsag" else 2
            off = [np_ for np_, m, _ in sorted(pts) if m < lo]
            note = " (below the chart at %s ranks)" % ", ".join(map(str, off)) if off else ""
            plots.append("'%s' index %d using 1:2:3 with yerrorlines lw 2 dt %d pt 7 lc rgb '%s' title '%s %s%s'"
                         % (dat, i, dash, colors.get(fmt, "black"), fmt, ALG_NAMES.get(alg, alg), note))
    script = "\n".join([
        "set terminal pngcairo size 900,650 font ',10' noenhanced",
        "set output '%s'" % png,
        "set title '%s'" % title.replace("'", "''"),
        "set xlabel 'ranks'; set ylabel 'difference (pp)'; set logscale x 2; set grid",
        "set xrange [3:40]; set yrange [%.1f:%.1f]; set key below" % (lo, hi),
        "set arrow from 3,0 to 40,0 nohead lc rgb 'black'",
        "plot " + ", ".join(plots), ""])
    subprocess.run(["gnuplot"], input=script.encode(), check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--command", default="", help="the command that made the runs, for the text")
    ap.add_argument("--plot", help="write the plot to this PNG")
    ap.add_argument("--intro", help="Markdown printed after the title")
    ap.add_argument("--title", default="Training across rank counts: apsmpi's old and new algorithm against FP32")
    ap.add_argument("--plot-title",
                    default="MLP on Fashion-MNIST: final test accuracy minus FP32 of the same seed (mean, +-1 s.e.)")
    ap.add_argument("runs_dir")
    a = ap.parse_args()
    runs, failed = load(a.runs_dir)
    if not runs and not failed:
        sys.exit("train_scale_summary.py: no runs under %s" % a.runs_dir)
    lines, points = table(runs, failed)
    print_head(a.title, a.command, a.intro)
    print("\n".join(lines))
    if a.plot:
        plot(points, a.plot, a.plot_title)
        print()
        print("![difference from FP32 against the rank count](%s)" % os.path.basename(a.plot))


if __name__ == "__main__":
    main()
