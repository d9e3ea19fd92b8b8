# train_auto_summary.py: the table of the APSMPI_FORMAT=auto study (scripts/study/train_auto.sh OUT): per rank count and run, accuracy against FP32 of the same seed, bytes ratio, calls per width.
# usage: python3 scripts/study/train_auto_summary.py OUT
import sys, re, glob, os, statistics as st
out = sys.argv[1]
rows = {}
for csv in glob.glob(os.path.join(out, "runs/seed*/np*-*.csv")):
    m = re.search(r"seed(\d+)/np(\d+)-(.+)\.csv$", csv)
    seed, np_, name = int(m.group(1)), int(m.group(2)), m.group(3)
    lines = open(csv).read().strip().splitlines()
    acc = float(lines[-1].split(",")[5])
    log = open(csv[:-4] + ".log").read()
    b = re.search(r"bytes (\d+) -> (\d+) \(([0-9.]+)x", log)
    a = re.search(r"apsmpi stats: auto.*", log)
    widths = ""
    if a:
        calls = re.findall(r"(mxfp4|mxfp6|mxfp8|fp32) calls (\d+)", a.group(0))
        tot = sum(int(c) for _, c in calls)
        widths = ", ".join("%s %.0f%%" % (w, 100.0 * int(c) / tot) for w, c in calls if int(c))
        same = "yes" if "same on every rank: yes" in a.group(0) else "no"
        widths += " (same on every rank: %s)" % same
    rows[(np_, name, seed)] = (acc, float(b.group(3)) if b else 1.0, widths)
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
            d = "%+.2f ± %.2f" % (st.mean(diffs), se)
            mm = "%+.2f .. %+.2f" % (min(diffs), max(diffs))
        print("| %d | %s | %d | %.2f | %s | %s | %.2fx | %s |" % (np_, name, len(seeds), st.mean(accs), d, mm, ratio, w))
