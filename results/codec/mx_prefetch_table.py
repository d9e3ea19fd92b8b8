# mx_prefetch_table.py CSV: the markdown table of mx_prefetch_ab.csv (scripts/bench/mx_loops_ab.sh's rows with the size in front): per format and level, each size's speed-up of the sum, the encode and the decode (the old build's time over the new one's, median over pairs, quartiles in brackets), and whether the bytes were identical in every row.
import csv, sys, collections
cell = collections.defaultdict(dict)
sizes, same = [], True
for row in csv.DictReader(open(sys.argv[1])):
    n = int(row["elements"])
    if n not in sizes:
        sizes.append(n)
    same = same and row["identical"] == "1"
    cell[(row["format"], row["level"])][(n, row["op"])] = "%s (%s-%s)" % (row["speedup"], row["speedup_q1"], row["speedup_q3"])
heads = [f"{op} at {n // 1048576} Mi" for n in sizes for op in ("sum", "encode", "decode")]
print("| format | level | " + " | ".join(heads) + " |")
print("| --- | --- |" + " ---: |" * len(heads))
for (fmt, lvl), c in cell.items():
    print(f"| {fmt} | {lvl} | " + " | ".join(c.get((n, op), "") for n in sizes for op in ("sum", "encode", "decode")) + " |")
print("\nidentical bytes in every row: %s" % ("yes" if same else "NO"))
