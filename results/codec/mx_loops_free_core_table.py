# mx_loops_free_core_table.py CSV: the markdown table of one binary's rounds (mx_loops_free_core_runs.sh's CSV): per format and level, the median over rounds of the packed sum's and the encode's ratio to memcpy, each round's, and whether it reaches the 0.8.
import csv, statistics, sys, collections
ratio = collections.defaultdict(list)
for row in csv.DictReader(open(sys.argv[1])):
    if row["status"] != "0":
        sys.exit("a run failed: %s" % row)
    ratio[(row["level"], row["format"], row["op"])].append(float(row["ratio_to_memcpy"]))
fmts = list(dict.fromkeys(f for (_, f, _) in ratio))
print("| format | level | packed sum | (each round) | encode | (each round) |")
print("| --- | --- | ---: | --- | ---: | --- |")
for fmt in fmts:
    for lvl in ["avx2", "avx512"]:
        cells = []
        for op in ["sum", "encode"]:
            r = ratio[(lvl, fmt, op)]
            m = statistics.median(r)
            cells += [("**%.2f**" if m >= 0.8 else "%.2f") % m, " ".join("%.2f" % x for x in r)]
        print(f"| {fmt} | {lvl} | " + " | ".join(cells) + " |")
