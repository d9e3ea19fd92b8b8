# mx_loops_table.py: the medians over rounds of mx_loops_runs.txt (mx_loops_runs.sh's output): ratios to memcpy before and after, and the measured encode against the plain one.
import re,statistics,sys,collections
rows=collections.defaultdict(list); ms=collections.defaultdict(list)
for line in open(sys.argv[1]):
    m=re.match(r'(before|after|measured) (\d): (\S+)\s+(\S+)\s+(\S+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)',line)
    if not m: continue
    v,r,lvl,fmt,op,n,t,g,ratio=m.groups()
    rows[(v,lvl,fmt,op)].append(float(ratio)); ms[(v,lvl,fmt,op)].append(float(t))
med=lambda x: statistics.median(x) if x else float('nan')
print("| format | level | encode before | encode after | packed sum before | packed sum after | decode before | decode after |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for fmt in ["mxfp4","mxfp5","mxfp6","mxfp8","e4m3"]:
    for lvl in ["avx2","avx512"]:
        c=[med(rows[(v,lvl,fmt,op)]) for op in ["encode","sum","decode"] for v in ["before","after"]]
        print(f"| {fmt} | {lvl} | {c[0]:.2f} | {c[1]:.2f} | {c[2]:.2f} | {c[3]:.2f} | {c[4]:.2f} | {c[5]:.2f} |")
print()
print("| level | " + " | ".join(["mxfp4","mxfp5","mxfp6","mxfp8"])+" |")
print("| --- | ---: | ---: | ---: | ---: |")
for lvl in ["scalar","avx2","avx512"]:
    cells=[]
    for fmt in ["mxfp4","mxfp5","mxfp6","mxfp8"]:
        # per round ratio measured/plain then median
        a=ms[("measured",lvl,fmt,"encode-measured")]; p=ms[("measured",lvl,fmt,"encode")]; s=ms[("measured",lvl,fmt,"encode-separate")]
        rr=[x/y for x,y in zip(a,p)]; rs=[x/y for x,y in zip(s,p)]
        cells.append(f"{med(p):.3f} ms; {med(rr):.2f} (separate {med(rs):.2f})")
    print(f"| {lvl} | "+" | ".join(cells)+" |")
