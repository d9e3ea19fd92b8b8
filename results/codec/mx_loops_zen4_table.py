# mx_loops_zen4_table.py CSV COMMIT: the markdown tables of the runs of COMMIT in mx_loops_zen4_runs.sh's CSV: per size, format and level, the packed sum's and the encode's rate (G elements/s, median over rounds), memcpy's (each run's rate over its ratio), and two ratios to it: the median over rounds of each run's own ratio, and the median rate over the median memcpy of the size; bold where both reach the 0.8.
import csv, statistics, sys, collections
rate = collections.defaultdict(list)
ratio = collections.defaultdict(list)
copy = collections.defaultdict(list)
for row in csv.DictReader(open(sys.argv[1])):
    if row["commit"] != sys.argv[2]:
        continue
    if row["status"] != "0":
        sys.exit("a run failed: %s" % row)
    key = (int(row["elements"]), row["level"], row["format"], row["op"])
    g, x = float(row["gelem_per_s"]), float(row["ratio_to_memcpy"])
    rate[key].append(g)
    ratio[key].append(x)
    copy[key[0]].append(g / x)
med = statistics.median
for n in sorted(copy):
    c = copy[n]
    print(f"\n{n} floats: memcpy {med(c):.2f} G elements/s (median of {len(c)} runs, {min(c):.2f}-{max(c):.2f})\n")
    print("| format | level | sum G/s | sum: run ratio | sum: rate / memcpy | encode G/s | encode: run ratio | encode: rate / memcpy |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    fmts = list(dict.fromkeys(f for (m, _, f, _) in rate if m == n))
    for fmt in fmts:
        for lvl in ["avx2", "avx512"]:
            cells = []
            for op in ["sum", "encode"]:
                key = (n, lvl, fmt, op)
                a, b = med(ratio[key]), med(rate[key]) / med(c)
                bold = "**%.2f**" if min(a, b) >= 0.8 else "%.2f"
                cells += ["%.2f" % med(rate[key]), bold % a, bold % b]
            print(f"| {fmt} | {lvl} | " + " | ".join(cells) + " |")
