# train_auto_summary.py: the table of the APSMPI_FORMAT=auto study (scripts/study/train_auto.sh OUT): per rank count and run, accuracy against FP32 of the same seed, bytes ratio, calls per width.
# usage: python3 scripts/study/train_auto_summary.py OUT [--reference RUNS.CSV] [--gpt DIR [--gpt-reference RUNS.CSV]] [--runs-csv FILE]
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
    """The calls per width of an auto statistics line, and whether every rank agreed."""
    return [(n, int(c)) for n, c in re.findall(r"(?:: |; )([a-z0-9]+) calls (\d+)", line)], \
        "same on every rank: yes" in line


def widths_text(runs):
    """The share of calls on each width summed over runs' widths_of, and whether every rank of
    every run agreed; empty for runs without auto."""
    runs = [w for w in runs if w]
    if not runs:
        return ""
    calls = {}
    for per, _ in runs:
        for n, c in per:
            calls[n] = calls.get(n, 0) + c
    tot = sum(calls.values()) or 1
    w = ", ".join("%s %.0f%%" % (n, 100.0 * c / tot) for n, c in calls.items() if c)
    return w + " (same on every rank: %s)" % ("yes" if all(a for _, a in runs) else "no")


# --runs-csv FILE: every run of OUT (and of --gpt DIR) in one CSV, the shape of mx_seeds' runs.csv
# (run, exit_status, then the program's columns); runs without a CSV get a row of their status alone
runs_csv = args[args.index("--runs-csv") + 1] if "--runs-csv" in args else None
csv_rows = []


def keep_rows(run, path, rc):
    lines = open(path).read().strip().splitlines() if os.path.exists(path) else []
    if len(lines) < 2:
        csv_rows.append([run, rc])
    for line in lines[1:]:
        csv_rows.append([run, rc] + line.split(","))


if reference:
    last = {}
    for r in csvmod.DictReader(open(reference)):
        m = re.match(r"seed(\d+)/np(\d+)-([a-z0-9]+)", r["run"])
        if m and r["exit_status"] == "0":
            last[(int(m.group(2)), m.group(3), int(m.group(1)))] = float(r["test_acc"])
    for (np_, name, seed), acc in last.items():
        rows[(np_, name, seed)] = (acc, 32.0 / FIXED_BITS.get(name, 32.0), None)
for csv in glob.glob(os.path.join(out, "runs/seed*/np*-*.csv")):
    m = re.search(r"seed(\d+)/np(\d+)-(.+)\.csv$", csv)
    seed, np_, name = int(m.group(1)), int(m.group(2)), m.group(3)
    rc = open(csv[:-4] + ".rc").read().strip() if os.path.exists(csv[:-4] + ".rc") else None
    if rc is not None:
        keep_rows("seed%d/np%d-%s" % (seed, np_, name), csv, rc)
    if rc != "0":
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
    rows[(np_, name, seed)] = (acc, ratio, widths_of(a.group(0)) if a else None)
for np_ in sorted({k[0] for k in rows}):
    print("\n| ranks | run | seeds | test acc % (mean) | vs FP32 same seed, pp: mean ± s.e. | min .. max | bytes ratio | calls per width (all seeds) |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    names = sorted({k[1] for k in rows if k[0] == np_}, key=lambda n: (n != "fp32", n))
    for name in names:
        seeds = sorted(k[2] for k in rows if k[0] == np_ and k[1] == name)
        accs = [rows[(np_, name, s)][0] for s in seeds]
        diffs = [rows[(np_, name, s)][0] - rows[(np_, "fp32", s)][0] for s in seeds if (np_, "fp32", s) in rows]
        ratio = st.mean(rows[(np_, name, s)][1] for s in seeds)
        w = widths_text(rows[(np_, name, s)][2] for s in seeds)
        if name == "fp32":
            d = "seed-to-seed s.d. %.2f" % (st.stdev(accs) if len(accs) > 1 else 0)
            mm = "%.2f .. %.2f (acc)" % (min(accs), max(accs))
        else:
            se = st.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else 0
            d = "%+.2f ± %.2f" % (st.mean(diffs), se) if diffs else "(no FP32 of these seeds)"
            mm = "%+.2f .. %+.2f" % (min(diffs), max(diffs)) if diffs else ""
        print("| %d | %s | %d | %.2f | %s | %s | %.2fx | %s |" % (np_, name, len(seeds), st.mean(accs), d, mm, ratio, w))

# --gpt DIR [--gpt-reference RUNS.CSV]: the transformer's table (scripts/study/train_gpt_study.sh
# --out DIR runs, and the runs.csv of results/training/transformer/ for FP32 and fixed formats):
# final validation loss against FP32 of the same seed, in percent
if "--gpt" in args:
    gdir = args[args.index("--gpt") + 1]
    gref = args[args.index("--gpt-reference") + 1] if "--gpt-reference" in args else None
    FIXED_GPT = {"fp32": 1.0, "mxfp4": 32 / 4.25, "mxfp8": 32 / 8.25, "e2m1": 8.0, "mxfp6": 32 / 6.25}
    g, own = {}, set()
    if gref:
        fin = {}
        for r in csvmod.DictReader(open(gref)):
            m = re.match(r"seed(\d+)/np(\d+)-([a-z0-9]+)-fused$", r["run"])
            if m and r["exit_status"] == "0":
                fin[(int(m.group(2)), m.group(3), int(m.group(1)))] = float(r["test_loss"])  # the last row wins
        for k, v in fin.items():
            if k[1] in FIXED_GPT:
                g[k] = (v, FIXED_GPT[k[1]], None)
    for path in glob.glob(os.path.join(gdir, "runs/seed*/np*-*-fused.csv")):
        m = re.search(r"seed(\d+)/np(\d+)-(.+)-fused\.csv$", path)
        seed, np_, name = int(m.group(1)), int(m.group(2)), m.group(3)
        rc = open(path[:-4] + ".rc").read().strip() if os.path.exists(path[:-4] + ".rc") else None
        if rc is not None:
            keep_rows("transformer/seed%d/np%d-%s-fused" % (seed, np_, name), path, rc)
        if rc != "0":
            continue
        loss = float(open(path).read().strip().splitlines()[-1].split(",")[8])
        log = open(path[:-4] + ".out").read()
        a = re.search(r"apsmpi stats: auto.*", log)
        ratio = 1.0
        if a:
            per = re.findall(r"[a-z0-9]+ calls \d+, bytes (\d+) -> (\d+)", a.group(0))
            ratio = sum(int(i) for i, w in per) / max(1, sum(int(w) for i, w in per))
        g[(np_, name, seed)] = (loss, ratio, widths_of(a.group(0)) if a else None)
        own.add(np_)
    for np_ in sorted(own):  # the rank counts DIR ran
        print("\n| ranks | run | seeds | val loss (mean) | vs FP32 same seed: mean ± s.e. | min .. max | bytes ratio | calls per width (all seeds) |")
        print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |")
        for name in sorted({k[1] for k in g if k[0] == np_}, key=lambda n: (n != "fp32", n)):
            seeds = sorted(k[2] for k in g if k[0] == np_ and k[1] == name)
            losses = [g[(np_, name, s)][0] for s in seeds]
            rel = [100 * (g[(np_, name, s)][0] / g[(np_, "fp32", s)][0] - 1) for s in seeds if (np_, "fp32", s) in g]
            ratio = st.mean(g[(np_, name, s)][1] for s in seeds)
            if name == "fp32":
                d, mm = "seed-to-seed s.d. %.4f" % (st.stdev(losses) if len(losses) > 1 else 0), ""
            else:
                se = st.stdev(rel) / len(rel) ** 0.5 if len(rel) > 1 else 0
                d = "%+.2f%% ± %.2f%%" % (st.mean(rel), se) if rel else ""
                mm = "%+.2f%% .. %+.2f%%" % (min(rel), max(rel)) if rel else ""
            print("| %d | %s | %d | %.4f | %s | %s | %.2fx | %s |" % (np_, name, len(seeds), st.mean(losses), d, mm, ratio,
                                                                    widths_text(g[(np_, name, s)][2] for s in seeds)))

if runs_csv:
    with open(runs_csv, "w", newline="") as f:
        w = csvmod.writer(f)
        w.writerow(["run", "exit_status", "label", "model", "ranks", "epoch", "train_loss", "test_acc", "epoch_s",
                    "allreduce_s", "test_loss", "step"])
        w.writerows(sorted(csv_rows, key=lambda r: (r[0], int(r[5]) if len(r) > 5 and r[5].isdigit() else 0)))
