# mx_loops_shared_core_table.py CSV: the markdown table of mx_loops_shared_core_runs.sh's CSV: per format and level, the median over rounds of the packed sum's and the encode's ratio to memcpy, with each run's median of its reps and with its fastest rep (--fastest), and the rounds' spread (lowest-highest).
import csv, statistics, sys, collections
ratio = collections.defaultdict(list)
for row in csv.DictReader(open(sys.argv[1])):
    if row["status"] != "0":
        sys.exit("a run failed: %s" % row)
    ratio[(row["stat"], row["level"], row["format"], row["op"])].append(float(row["ratio_to_memcpy"]))
fmts = list(dict.fromkeys(f for (_, _, f, _) in ratio))
print("| format | level | sum, median | (spread) | sum, fastest | (spread) | encode, median | (spread) | encode, fastest | (spread) |")
print("| --- | --- | ---: | --- | ---: | --- | ---: | --- | ---: | --- |")
for fmt in fmts:
    for lvl in ["avx2", "avx512"]:
        cells = []
        for op in ["sum", "encode"]:
            for stat in ["median", "fastest"]:
                r = ratio[(stat, lvl, fmt, op)]
                m = statistics.median(r)
                cells += [("**%.2f**" if m >= 0.8 else "%.2f") % m, "%.2f-%.2f" % (min(r), max(r))]
        print(f"| {fmt} | {lvl} | " + " | ".join(cells) + " |")
