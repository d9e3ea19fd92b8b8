#!/usr/bin/python3
"""train_summary.py: the multi-seed table of the training comparison: accuracy of each format against FP32 of the same seed.

usage: scripts/study/train_summary.py [--pp8 0.1] [--pp16 0.05] MODEL SEED_DIR...

Each SEED_DIR is the --out directory of one scripts/study/train_compare.sh run (made by
scripts/study/train_study.sh as OUT/seedK); its runs are read from SEED_DIR/runs/MODEL/. For
every rank count, format and scaling the table gives the final test accuracy over the
seeds and its difference from the FP32 run of the same seed: mean, standard error,
smallest and largest, and in how many seeds it stayed within the target (0.1 pp for
8-bit and narrower formats, 0.05 pp for 16-bit). FP32's own spread from seed to seed is
the yardstick: a difference smaller than that is noise of the trajectory, not a loss.
Prints Markdown on stdout.
"""
import argparse
import glob
import math
import os
import re
import sys


def final_row(csv_path):
    """(final test accuracy, diverged epoch or None, mean epoch s, mean allreduce s) of one run's CSV."""
    acc, diverged, epoch_s, ar_s = None, None, [], []
    with open(csv_path) as f:
        next(f)
        for line in f:
            cols = line.strip().split(",")
            if len(cols) < 8:
                continue
            if diverged is None and re.search("nan|inf", cols[4], re.I):
                diverged = int(cols[3])
            acc = float(cols[5])
            epoch_s.append(float(cols[6]))
            ar_s.append(float(cols[7]))
    if acc is None:
        return None
    return acc, diverged, sum(epoch_s) / len(epoch_s), sum(ar_s) / len(ar_s)


def ratio_of(log_path):
    try:
        with open(log_path) as f:
            m = re.search(r"; bytes \d+ -> \d+ \(([0-9.]+x)\)", f.read())
            return m.group(1) if m else ""
    except OSError:
        return ""


def width_of(fmt):
    if fmt in ("fp16", "bf16"):
        return 16
    m = re.fullmatch(r"e(\d+)m(\d+)", fmt)
    return 1 + int(m.group(1)) + int(m.group(2)) if m else 8


FORMAT_ORDER = ["fp32", "fp16", "bf16", "e5m2", "e4m3"]
SCALING_ORDER = ["block", "aps", "none"]


def row_order(key):
    """FP32 first, then the formats from widest to narrowest, APS before none."""
    name = key[1]
    fmt, sc = (name, "") if name == "fp32" else name.rsplit("-", 1)
    fi = FORMAT_ORDER.index(fmt) if fmt in FORMAT_ORDER else len(FORMAT_ORDER) + 32 - width_of(fmt)
    si = SCALING_ORDER.index(sc) if sc in SCALING_ORDER else len(SCALING_ORDER)
    return (fi, fmt, si)


def print_head(title, command="", intro=None, made_by_note=""):
    """The title of a study's README, the command that made it and the hand-written intro (a file, if it exists)."""
    print("# " + title)
    print()
    if command:
        print("Made by `%s`%s." % (command, made_by_note))
        print()
    if intro and os.path.exists(intro):
        print(open(intro).read().rstrip())
        print()


def mean_se(xs):
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, float("nan"), float("nan")
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    return m, sd / math.sqrt(len(xs)), sd


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pp8", type=float, default=0.1, help="target for 8-bit and narrower formats (pp)")
    ap.add_argument("--pp16", type=float, default=0.05, help="target for 16-bit formats (pp)")
    ap.add_argument("model")
    ap.add_argument("seed_dirs", nargs="+")
    a = ap.parse_args()

    runs = {}  # (np, name) -> {seed: result}
    order = []
    seeds = []
    for d in a.seed_dirs:
        m = re.search(r"seed(\d+)$", os.path.normpath(d))
        if not m:
            sys.exit(f"train_summary.py: {d}: directory name must end in seedN")
        seed = int(m.group(1))
        seeds.append(seed)
        for csv in sorted(glob.glob(os.path.join(d, "runs", a.model, "np*-*.csv"))):
            base = os.path.basename(csv)[:-4]
            np_, name = base[2:].split("-", 1)
            rc_path = csv[:-4] + ".rc"
            rc = open(rc_path).read().strip() if os.path.exists(rc_path) else "?"
            key = (int(np_), name)
            if key not in runs:
                runs[key] = {}
                order.append(key)
            res = final_row(csv) if rc == "0" else None
            runs[key][seed] = (res, ratio_of(csv[:-4] + ".log"), rc)
    if not runs:
        sys.exit(f"train_summary.py: no runs of {a.model} under {' '.join(a.seed_dirs)}")

    seeds.sort()
    print(f"| ranks | format | scaling | seeds | test acc % (mean) | vs FP32 same seed, pp: mean ± s.e. "
          f"| min .. max | within target | diverged | ratio | epoch s | allreduce s |")
    print("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for np_ in sorted({k[0] for k in order}):
        base = runs.get((np_, "fp32"), {})
        keys = [k for k in order if k[0] == np_]
        keys.sort(key=row_order)
        for key in keys:
            name = key[1]
            fmt, sc = (name, "—") if name == "fp32" else name.rsplit("-", 1)
            accs, deltas, div, ratio, ep, ar, failed = [], [], 0, "", [], [], 0
            for seed in seeds:
                res, r, rc = runs[key].get(seed, (None, "", "missing"))
                if res is None:
                    failed += 1
                    continue
                acc, diverged, eps, ars = res
                ratio = ratio or r
                accs.append(acc)
                ep.append(eps)
                ar.append(ars)
                if diverged is not None or acc <= 15.0:
                    div += 1
                b = base.get(seed, (None,))[0]
                if b is not None and name != "fp32":
                    deltas.append(acc - b[0])
            if not accs:
                print(f"| {np_} | {fmt} | {sc} | 0 | failed | | | | | | | |")
                continue
            macc = sum(accs) / len(accs)
            seeds_cell = f"{len(accs)}" + (f" ({failed} failed)" if failed else "")
            if name == "fp32":
                m, se, sd = mean_se(accs)
                delta_cell = f"seed-to-seed s.d. {sd:.2f}" if len(accs) > 1 else "—"
                range_cell = f"{min(accs):.2f} .. {max(accs):.2f} (acc)"
                within = "—"
                ratio = "1.00x"
            else:
                target = a.pp16 if width_of(fmt) >= 16 else a.pp8
                m, se, sd = mean_se(deltas) if deltas else (float("nan"),) * 3
                delta_cell = f"{m:+.2f} ± {se:.2f}" if len(deltas) > 1 else f"{m:+.2f}"
                range_cell = f"{min(deltas):+.2f} .. {max(deltas):+.2f}" if deltas else ""
                within = f"{sum(abs(d) <= target + 1e-9 for d in deltas)}/{len(deltas)} (±{target:g})"
            print(f"| {np_} | {fmt} | {sc} | {seeds_cell} | {macc:.2f} | {delta_cell} | {range_cell} | {within} "
                  f"| {div}/{len(accs)} | {ratio} | {sum(ep) / len(ep):.1f} | {sum(ar) / len(ar):.1f} |")


if __name__ == "__main__":
    main()
