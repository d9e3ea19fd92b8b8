# train_auto_summary.py: the table of the APSMPI_FORMAT=auto study (scripts/study/train_auto.sh OUT): per rank count and run, accuracy against FP32 of the same seed, bytes ratio, calls per width.
# usage: python3 scripts/study/train_auto_summary.py OUT [--reference RUNS.CSV]
# --reference: runs of fixed formats in the runs.csv shape of results/training/mx_seeds/ (the same
# program and setting), whose FP32, mxfp4 and mxfp8 rows join the table (their bytes ratios are
# the formats' own: 32 bits over the bits an element); OUT's own runs of a name win over them.
import sys, re, glob, os, csv as csvmod, statistics as st

FIXED_BITS = {"mxfp4": 4.25, "mxfp5": 5.25, "mxfp6": 6.25, "mxfp8": 8.25, "fp32": 32.0}
args = sys.argv[1:]
out = args[0]
reference = args[args.index("--reference") + 1] if "--reference" in args else None
rows = {}


def widths_of(line):
    """The calls per width of an auto statistics line, as shares, and whether every rank agreed."""
    calls = re.findall(r"(?:: |; )([a-z0-9]+) calls (\d+)", line)
    tot = sum(int(c) for _, c in calls)
    w = ", ".join("%s %.0f%%" % (n, 100.0 * int(c) / tot) for n, c in calls if int(c))
    return w + " (same on every rank: %s)" % ("yes" if "same on every rank: yes" in line else "no")


if reference:
    last = {}
    for r in csvmod.DictReader(open(reference)):
        m = re.match(r"seed(\d+)/np(\d+)-([a-z0-9]+)", r["run"])
        if m and r["exit_status"] == "0":
            last[(int(m.group(2)), m.group(3), int(m.group(1)))] = float(r["test_acc"])
    for (np_, name, seed), acc in last.items():
        rows[(np_, name, seed)] = (acc, 32.0 / FIXED_BITS.get(name, 32.0), "")
for csv in glob.glob(os.path.join(out, "runs/seed*/np*-*.csv")):
    m = re.search(r"seed(\d+)/np(\d+)-(.+)\.csv$", csv)
    seed, np_, name = int(m.group(1)), int(m.group(2)), m.group(3)
    if not os.path.exists(csv[:-4] + ".rc") or open(csv[:-4] + ".rc").read().strip() != "0":
        continue  # running, or failed
    lines = open(csv).read().strip().splitlines()
    acc = float(lines[-1].split(",")[5])
    log = open(csv[:-4] + ".log").read()
    b = re.search(r"bytes (\d+) -> (\d+) \(([0-9.]+)x", log)
    a = re.search(r"apsmpi stats: auto.*", log)
    ratio = float(b.group(3)) if b else 1.0
    if a:  # auto: every width's bytes, FP32's calls (which the compressed bytes leave out) included
        per = re.findall(r"[a-z0-9]+ calls \d+, bytes (\d+) -> (\d+)", a.group(0))
        fp32_in = sum(int(i) for i, w in per)
        ratio = fp32_in / sum(int(w) for i, w in per) if per and fp32_in else ratio
    rows[(np_, name, seed)] = (acc, ratio, widths_of(a.group(0)) if a else "")
for np_ in sorted({k[0] for k in rows}):
    print("\n| ranks | run | seeds | test acc % (mean) | vs FP32 same seed, pp: mean ± s.e. | min .. max | bytes ratio | calls per width (seed 1) |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    names = sorted({k[1] for k in rows if k[0] == np_}, key=lambda n: (n != "fp32", n))
    for name in names:
        seeds = sorted(k[2] for k in rows if k[0] == np_ and k[1] == name)
        accs = [rows[(np_, name, s)][0] for s in seeds]
        diffs = [rows[(np_, name, s)][0] - rows[(np_, "fp32", s)][0] for s in seeds if (np_, "fp32", s) in rows]
        ratio = st.mean(rows[(np_, name, s)][1] for s in seeds)
        w = rows[(np_, name, seeds[0])][2]
        if name == "fp32":
            d = "seed-to-seed s.d. %.2f" % (st.stdev(accs) if len(accs) > 1 else 0)
            mm = "%.2f .. %.2f (acc)" % (min(accs), max(accs))
        else:
            se = st.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else 0
            d = "%+.2f ± %.2f" % (st.mean(diffs), se) if diffs else "(no FP32 of these seeds)"
            mm = "%+.2f .. %+.2f" % (min(diffs), max(diffs)) if diffs else ""
        print("| %d | %s | %d | %.2f | %s | %s | %.2fx | %s |" % (np_, name, len(seeds), st.mean(accs), d, mm, ratio, w))
