# mx_sum_fp16_table.py: the medians over rounds of mx_sum_fp16_runs.txt (mx_sum_fp16_runs.sh's output): each op's ratio to memcpy before and after, and after's time over before's in the same round (which this VM's spread between runs does not move).
import re, statistics, sys, collections
ratio = collections.defaultdict(list)
ms = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    m = re.match(r'(before|after) (\d): (\S+)\s+(\S+)\s+(\S+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)', line)
    if m:
        v, r, lvl, fmt, op, n, t, g, x = m.groups()
        ratio[(v, lvl, fmt, op)].append(float(x))
        ms[(lvl, fmt, op, r)][v] = float(t)
med = lambda x: statistics.median(x) if x else float('nan')
def speedup(lvl, fmt, op):
    return med([d['before'] / d['after'] for (l, f, o, r), d in ms.items() if (l, f, o) == (lvl, fmt, op) and len(d) == 2])
print("| format | level | packed sum before | packed sum after | (after, each round) | sum speed-up | encode before | encode after | encode speed-up |")
print("| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
for fmt in ["mxfp4", "mxfp5", "mxfp6", "mxfp6e2m3", "mxfp8", "mxfp8e5m2", "e4m3"]:
    for lvl in ["avx2", "avx512"]:
        c = {(v, op): med(ratio[(v, lvl, fmt, op)]) for v in ["before", "after"] for op in ["sum", "encode"]}
        each = " ".join("%.2f" % x for x in ratio[("after", lvl, fmt, "sum")])
        print(f"| {fmt} | {lvl} | {c['before','sum']:.2f} | **{c['after','sum']:.2f}** | {each} | x{speedup(lvl, fmt, 'sum'):.2f} "
              f"| {c['before','encode']:.2f} | {c['after','encode']:.2f} | x{speedup(lvl, fmt, 'encode'):.2f} |")
