# mx_loops_ab_table.py CSV: the markdown table of an A/B run of apps/bench_codec (mx_loops_w5_runs.sh's CSV): per format and level, the median over rounds of each op's ratio to memcpy before and after, and of before's time over after's in the same round (which this VM's spread between runs moves least).
import csv, statistics, sys, collections
ratio = collections.defaultdict(list)
ms = collections.defaultdict(dict)
for row in csv.DictReader(open(sys.argv[1])):
    if row["status"] != "0":
        sys.exit("a run failed: %s" % row)
    ratio[(row["binary"], row["level"], row["format"], row["op"])].append(float(row["ratio_to_memcpy"]))
    ms[(row["level"], row["format"], row["op"], row["round"])][row["binary"]] = float(row["ms"])
med = lambda x: statistics.median(x) if x else float("nan")
def speedup(lvl, fmt, op):
    return med([d["before"] / d["after"] for (l, f, o, r), d in ms.items() if (l, f, o) == (lvl, fmt, op) and len(d) == 2])
fmts = list(dict.fromkeys(f for (_, _, f, _) in ratio))
print("| format | level | packed sum before | packed sum after | (after, each round) | sum speed-up | encode before | encode after | encode speed-up |")
print("| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
for fmt in fmts:
    for lvl in ["avx2", "avx512"]:
        c = {(v, op): med(ratio[(v, lvl, fmt, op)]) for v in ["before", "after"] for op in ["sum", "encode"]}
        each = " ".join("%.2f" % x for x in ratio[("after", lvl, fmt, "sum")])
        print(f"| {fmt} | {lvl} | {c['before','sum']:.2f} | **{c['after','sum']:.2f}** | {each} | x{speedup(lvl, fmt, 'sum'):.2f} "
              f"| {c['before','encode']:.2f} | {c['after','encode']:.2f} | x{speedup(lvl, fmt, 'encode'):.2f} |")
