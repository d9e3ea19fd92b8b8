#!/usr/bin/python3
"""train_gpt_summary.py: the tables and plot of scripts/study/train_gpt_study.sh: final validation loss of each format against FP32 of the same seed, the values flushed and zeroed, the loss curves of one seed.

usage: scripts/study/train_gpt_summary.py [--command TEXT] [--intro FILE] [--notes FILE] [--plot PNG] [--table MD]
                                   RUNS_DIR > README.md

RUNS_DIR holds seedK/npN-NAME-BUCKET.csv (one row per evaluation, from apps/apsmpi_train
--model gpt --csv), .out (its output) and .rc (the run's exit status); NAME is fp32 or the format (with
the study's --tag), BUCKET fused or pertensor. For every rank count, bucketing and format:
the seeds that finished, the mean final validation loss (nats per character) and accuracy,
and the difference of the loss from the FP32 run of the same seed, rank count and bucketing
(from FP32 fused when there is no FP32 run with that bucketing): mean, standard error,
smallest and largest; "within 2 s.e." says whether the mean difference is within two
standard errors of 0 (indistinguishable from FP32). Then, per library configuration, the
values flushed to zero (apsmpi's statistics line) and the gradient values the allreduce
returned as zero (the program's count), with the tensors that lost the most. --intro and
--notes: Markdown printed before and after the tables. --plot: a PNG (gnuplot) of the
validation loss per evaluation of the lowest seed, and of its difference from FP32.
--table: a short table (the differences and the values flushed) for other pages.
"""
import argparse
import glob
import math
import os
import re
import subprocess
import sys

from train_summary import mean_se, print_head

FORMAT_ORDER = ["fp32", "fp16", "bf16", "e5m2", "e4m3", "e3m2", "e2m1"]
BUCKET_TEXT = {"fused": "one fused bucket", "pertensor": "one call per tensor"}


def curve(csv_path):
    """[(step, val loss, val acc, train loss)] of one run's CSV, or None."""
    rows = []
    try:
        with open(csv_path) as f:
            next(f)
            for line in f:
                c = line.strip().split(",")
                if len(c) >= 10:
                    rows.append((int(c[9]), float(c[8]), float(c[5]), float(c[4])))
    except (OSError, StopIteration, ValueError):
        return None
    return rows or None


def log_facts(log_path):
    """(flushed %, bytes ratio, zeroed %, {tensor: zeroed %}) from a run's log; None where absent."""
    flushed = ratio = zeroed = None
    by_tensor = {}
    try:
        text = open(log_path, errors="replace").read()
    except OSError:
        return flushed, ratio, zeroed, by_tensor
    # "bytes B -> A (R.RRx)" or, since the statistics itemize the bytes, "(R.RRx; codes ...)"
    m = re.search(r"apsmpi stats: .*bytes \d+ -> \d+ \(([0-9.]+)x[;)].*?non-zero inputs flushed to zero \d+ of \d+ \(([0-9.]+)%\)",
                  text)
    if m:
        ratio, flushed = float(m.group(1)), float(m.group(2))
    m = re.search(r"zeroed by the allreduce [^:]*: \d+ of \d+ \(([0-9.e+-]+)%\)(?:; by tensor:(.*))?", text)
    if m:
        zeroed = float(m.group(1))
        for part in (m.group(2) or "").split(","):
            p = part.split()
            if len(p) == 2 and p[1].endswith("%"):
                by_tensor[p[0]] = float(p[1][:-1])
    return flushed, ratio, zeroed, by_tensor


def load(runs_dir):
    """{(np, bucket, name): {seed: run}} of the runs whose .rc is 0, and {key: failed count}."""
    runs, failed = {}, {}
    for rc_path in glob.glob(os.path.join(runs_dir, "seed*", "np*-*.rc")):
        seed = int(re.search(r"seed(\d+)$", os.path.dirname(rc_path)).group(1))
        base = os.path.basename(rc_path)[2:-3]
        np_, rest = base.split("-", 1)
        name, bucket = rest.rsplit("-", 1)
        key = (int(np_), bucket, name)
        rows = curve(rc_path[:-3] + ".csv") if open(rc_path).read().strip() == "0" else None
        if rows is None:
            failed[key] = failed.get(key, 0) + 1
            continue
        diverged = any(not math.isfinite(r[3]) for r in rows) or not math.isfinite(rows[-1][1])
        runs.setdefault(key, {})[seed] = {"rows": rows, "diverged": diverged, "facts": log_facts(rc_path[:-3] + ".out")}
    return runs, failed


def order(key):
    np_, bucket, name = key
    fmt = name.split("-")[0]
    return (np_, 0 if bucket == "fused" else 1, FORMAT_ORDER.index(fmt) if fmt in FORMAT_ORDER else 99, name)


def baseline(runs, key):
    np_, bucket, _ = key
    return runs.get((np_, bucket, "fp32")) or runs.get((np_, "fused", "fp32"), {})


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def loss_table(runs, failed):
    lines = ["| ranks | bucketing | format | seeds | val loss (mean) | vs FP32 same seed: mean ± s.e. | min .. max "
             "| within 2 s.e. of 0 | val acc % (mean) | acc vs FP32 (pp) | diverged | bytes ratio |",
             "| ---: | --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |"]
    for key in sorted(set(runs) | set(failed), key=order):
        np_, bucket, name = key
        got = runs.get(key, {})
        nfail = failed.get(key, 0)
        seeds_cell = "%d" % len(got) + (" (%d failed)" % nfail if nfail else "")
        head = "| %d | %s | %s | %s" % (np_, BUCKET_TEXT.get(bucket, bucket), name, seeds_cell)
        if not got:
            lines.append(head + " | failed | | | | | | | |")
            continue
        loss = [r["rows"][-1][1] for r in got.values()]
        acc = [r["rows"][-1][2] for r in got.values()]
        div = sum(r["diverged"] for r in got.values())
        ratio = mean([r["facts"][1] for r in got.values() if r["facts"][1]])
        ratio_cell = "1.00x" if name == "fp32" else ("%.2fx" % ratio if ratio == ratio else "")
        if name == "fp32":
            _, _, sd = mean_se(loss)
            spread = "—" if sd != sd else "seed-to-seed s.d. %.4f" % sd
            lines.append(head + " | %.4f | %s | %.4f .. %.4f (loss) | — | %.2f | — | %d/%d | %s |"
                         % (mean(loss), spread, min(loss), max(loss), mean(acc), div, len(got), ratio_cell))
            continue
        base = baseline(runs, key)
        pairs = [(got[s]["rows"][-1], base[s]["rows"][-1]) for s in sorted(got) if s in base]
        if not pairs:
            lines.append(head + " | %.4f | no FP32 run | | | %.2f | | %d/%d | %s |"
                         % (mean(loss), mean(acc), div, len(got), ratio_cell))
            continue
        d = [a[1] - b[1] for a, b in pairs]
        da = [a[2] - b[2] for a, b in pairs]
        m, se, _ = mean_se(d)
        within = "—" if se != se else ("yes" if abs(m) <= 2 * se else "**no**")
        delta = "%+.4f" % m if se != se else "%+.4f ± %.4f" % (m, se)
        lines.append(head + " | %.4f | %s | %+.4f .. %+.4f | %s | %.2f | %+.2f | %d/%d | %s |"
                     % (mean(loss), delta, min(d), max(d), within, mean(acc), mean(da), div, len(got), ratio_cell))
    return lines


def short_table(runs, failed):
    """The differences from FP32 and the flushed share, one row per configuration."""
    lines = ["| ranks | bucketing | format | seeds | val loss vs FP32 (nats/char) | within 2 s.e. of 0 | flushed |",
             "| ---: | --- | --- | ---: | ---: | --- | ---: |"]
    full = loss_table(runs, failed)[2:]
    for key, row in zip(sorted(set(runs) | set(failed), key=order), full):
        c = [x.strip() for x in row.strip("|").split("|")]
        facts = [r["facts"][0] for r in runs.get(key, {}).values() if r["facts"][0] is not None]
        flushed = "—" if key[2] == "fp32" else ("%.3g%%" % mean(facts) if facts else "?")
        delta = "loss %s; %s" % (c[4], c[5]) if key[2] == "fp32" else c[5]
        lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (c[0], c[1], c[2], c[3], delta, c[7], flushed))
    return lines


def flush_table(runs):
    lines = ["| ranks | bucketing | format | flushed to zero (apsmpi stats) | zeroed by the allreduce (program) "
             "| tensors that lost the most (share of their non-zero values zeroed) |",
             "| ---: | --- | --- | ---: | ---: | --- |"]
    for key in sorted(runs, key=order):
        np_, bucket, name = key
        if name == "fp32":
            continue
        facts = [r["facts"] for r in runs[key].values()]
        flushed = mean([f[0] for f in facts if f[0] is not None])
        zeroed = mean([f[2] for f in facts if f[2] is not None])
        tensors = {}
        for f in facts:
            for t, v in f[3].items():
                tensors.setdefault(t, []).append(v)
        top = sorted(tensors.items(), key=lambda kv: -sum(kv[1]) / len(facts))[:5]
        top_cell = ", ".join("%s %.3g%%" % (t, sum(v) / len(facts)) for t, v in top) or "none"
        lines.append("| %d | %s | %s | %s | %s | %s |"
                     % (np_, BUCKET_TEXT.get(bucket, bucket), name,
                        "%.4g%%" % flushed if flushed == flushed else "?",
                        "%.4g%%" % zeroed if zeroed == zeroed else "?", top_cell))
    return lines


COLORS = {"fp32": "black", "fp16": "#9467bd", "bf16": "#8c564b", "e5m2": "#ff7f0e", "e4m3": "#1f77b4",
          "e3m2": "#d62728", "e2m1": "#2ca02c"}


def plot(runs, png):
    """Validation loss per evaluation (top) and its difference from FP32 (bottom), lowest seed, a panel per
    rank count and bucketing."""
    groups = sorted({(k[0], k[1]) for k in runs}, key=lambda g: (g[0], g[1] != "fused"))
    if not groups:
        return None
    seed = min(s for v in runs.values() for s in v)
    dat = os.path.splitext(png)[0] + ".dat"
    blocks, index = [], 0
    with open(dat, "w") as f:
        for g in groups:
            base = runs.get((g[0], g[1], "fp32"), {}).get(seed) or runs.get((g[0], "fused", "fp32"), {}).get(seed)
            base_at = {r[0]: r[1] for r in base["rows"]} if base else {}
            for key in sorted((k for k in runs if (k[0], k[1]) == g), key=order):
                run = runs[key].get(seed)
                if not run:
                    continue
                f.write("# %d %s %s\n" % key)
                for step, loss, _, _ in run["rows"]:
                    diff = loss - base_at[step] if step in base_at else float("nan")
                    f.write("%d %.6f %.6f\n" % (step, loss, diff))
                f.write("\n\n")
                blocks.append((g, key[2], index))
                index += 1
    lines = ["set terminal pngcairo size %d,900 font ',10' noenhanced" % (430 * len(groups) + 60),
             "set output '%s'" % png,
             "set multiplot layout 2,%d title 'apsmpi: character-level transformer on Debian fortunes, seed %d'"
             % (len(groups), seed),
             "set grid; set key top right font ',8'; set xlabel 'step'"]
    for row, (col, ylabel) in enumerate([(2, "validation loss (nats/char)"), (3, "minus FP32 of the seed")]):
        for g in groups:
            plots = []
            for bg, name, i in blocks:
                if bg != g or (row == 1 and name == "fp32"):
                    continue
                fmt = name.split("-")[0]
                plots.append("'%s' index %d using 1:%d with linespoints pt 7 ps 0.4 lw %d lc rgb '%s' title '%s'"
                             % (dat, i, col, 3 if fmt == "fp32" else 1.5, COLORS.get(fmt, "#7f7f7f"), name))
            lines.append("set title '%d ranks, %s'; set ylabel '%s'" % (g[0], BUCKET_TEXT.get(g[1], g[1]), ylabel))
            lines.append("set yrange [*:*]" if row == 1 else "set yrange [*:3.0]")
            lines.append("plot " + ", ".join(plots) if plots else "plot 0 notitle")
    lines.append("unset multiplot")
    try:
        subprocess.run(["gnuplot"], input="\n".join(lines).encode(), check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print("train_gpt_summary.py: no plot (%s)" % e, file=sys.stderr)
        return None
    return seed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--command", default="", help="the command that made the runs, for the text")
    ap.add_argument("--intro", help="Markdown printed after the title")
    ap.add_argument("--notes", help="Markdown printed after the tables")
    ap.add_argument("--plot", help="write the loss curves to this PNG")
    ap.add_argument("--table", help="write the short table to this Markdown file")
    ap.add_argument("runs_dir")
    a = ap.parse_args()
    runs, failed = load(a.runs_dir)
    if not runs and not failed:
        sys.exit("train_gpt_summary.py: no runs under %s" % a.runs_dir)
    print_head("A character-level transformer trained with apsmpi off and on", a.command, a.intro,
               " (every run's CSV, output and exit status: `runs/seedK/`)")
    print("## Final validation loss against FP32 of the same seed")
    print()
    print("\n".join(loss_table(runs, failed)))
    print()
    print("## Values lost to zero")
    print()
    print("\n".join(flush_table(runs)))
    if a.plot:
        seed = plot(runs, a.plot)
        if seed is not None:
            print()
            print("Validation loss per evaluation, seed %d, and its difference from FP32 of that seed:" % seed)
            print()
            print("![loss curves](%s)" % os.path.basename(a.plot))
    if a.notes and os.path.exists(a.notes):
        print()
        print(open(a.notes).read().rstrip())
    if a.table:
        with open(a.table, "w") as f:
            f.write("\n".join(short_table(runs, failed)) + "\n")


if __name__ == "__main__":
    main()
