#!/usr/bin/python3
"""bench_nodes_table.py: the Markdown table of scripts/bench/bench_nodes.sh: allreduce time per layout, size and configuration, with speedups, the zero-cost bound and the physical limit.

usage: scripts/bench/bench_nodes_table.py CSV [CSV...] > MD

Rows: op,np,bytes,time_s,algbw_GBs,busbw_GBs,err,label, label "layout=MxL;cfg=CFG;round=R;rate=RATE"
(rows with fail=1 are left out). For each (rate, layout, size) and configuration: the median time
over the rounds (and the range); the speedup over plain Open MPI's ring and over its default
algorithm, each the median of the per-round ratios (both runs of a ratio from the same round);
for an apsmpi format of W bits, how far above the better zero-cost bound of that width it is (plain
MPI on the compressed byte count, best of default and ring, medians); and the physical limit of its
width: the bytes that must cross each node link each way, 2(M-1)/M * bytes * W/32, over the link
rate, with the time over that limit.
"""
import csv
import re
import statistics
import sys

RATE_UNITS = {"kbit": 1e3 / 8, "mbit": 1e6 / 8, "gbit": 1e9 / 8}
CFG_NAMES = {"mpi:default": "plain Open MPI, default algorithm", "mpi:ring": "plain Open MPI, ring"}
ALG_NAMES = {"ring": "old (ring)", "rsag": "new (rsag)"}


def bits_of(what):
    if what in ("mpi", "fp32"):
        return 32
    if what in ("fp16", "bf16"):
        return 16
    m = re.fullmatch(r"zero(\d+)", what)
    if m:
        return int(m.group(1))
    m = re.fullmatch(r"e(\d+)m(\d+)(ieee)?", what)
    return 1 + int(m.group(1)) + int(m.group(2)) if m else None


def cfg_name(cfg):
    if cfg in CFG_NAMES:
        return CFG_NAMES[cfg]
    parts = cfg.split(":")
    if parts[0].startswith("zero"):
        return "zero-cost %s-bit, %s" % (parts[0][4:], parts[1])
    name = "apsmpi %s %s" % (parts[0], ALG_NAMES.get(parts[1], parts[1]))
    return name + (" (Open MPI ring underneath)" if len(parts) > 2 and parts[2] == "ring" else "")


def cfg_order(cfg):
    parts = cfg.split(":")
    kind = 0 if parts[0] == "mpi" else 1 if parts[0].startswith("zero") else 2
    return (kind, -(bits_of(parts[0]) or 0), parts[0], cfg)


def load(paths):
    """{(rate, layout, bytes): {cfg: {round: time}}}"""
    data = {}
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                lab = dict(p.split("=", 1) for p in row["label"].split(";") if "=" in p)
                if lab.get("fail") or "layout" not in lab:
                    continue
                key = (lab.get("rate", "?"), lab["layout"], int(row["bytes"]))
                data.setdefault(key, {}).setdefault(lab["cfg"], {})[lab["round"]] = float(row["time_s"])
    return data


def ratio(ref, runs):
    """Median over the rounds that have both of ref time / this time; without a common round,
    the ratio of the medians, marked (runs of different rounds)."""
    rs = [ref[r] / t for r, t in runs.items() if r in ref]
    if rs:
        return "%.2fx" % statistics.median(rs)
    if ref and runs:
        return "%.2fx*" % (statistics.median(ref.values()) / statistics.median(runs.values()))
    return ""


def size_name(nbytes):
    return "%d MiB" % (nbytes >> 20) if nbytes >= 1 << 20 else "%d KiB" % (nbytes >> 10)


def link_bytes_per_s(rate):
    m = re.fullmatch(r"([0-9.]+)([a-z]+)", rate)
    return float(m.group(1)) * RATE_UNITS[m.group(2)] if m and m.group(2) in RATE_UNITS else None


def section(key, cfgs):
    rate, layout, nbytes = key
    nodes, per_node = (int(x) for x in layout.split("x"))
    bps = link_bytes_per_s(rate)
    lines = ["### %s nodes x %s ranks, %s, %s" % (nodes, per_node, rate, size_name(nbytes)), "",
             "| configuration | time ms, median (range), rounds | vs plain ring | vs plain default "
             "| above zero-cost of its width | physical limit of its width | time / limit |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    ring, dflt = cfgs.get("mpi:ring", {}), cfgs.get("mpi:default", {})
    for cfg in sorted(cfgs, key=cfg_order):
        runs = cfgs[cfg]
        med = statistics.median(runs.values())
        what = cfg.split(":")[0]
        bits = bits_of(what)
        zero = ""
        if not what.startswith("zero") and what != "mpi" and bits:
            zs = [statistics.median(cfgs[z].values()) for z in ("zero%d:default" % bits, "zero%d:ring" % bits)
                  if z in cfgs]
            zero = "%+.0f%%" % (100 * (med / min(zs) - 1)) if zs else ""
        limit = over = ""
        if bps and bits and nodes > 1:
            lim = 2.0 * (nodes - 1) / nodes * nbytes * bits / 32.0 / bps
            limit, over = "%.1f ms" % (lim * 1e3), "%.2f" % (med / lim)
        lines.append("| %s | %.1f (%.1f..%.1f), %d | %s | %s | %s | %s | %s |"
                     % (cfg_name(cfg), med * 1e3, min(runs.values()) * 1e3, max(runs.values()) * 1e3, len(runs),
                        ratio(ring, runs), ratio(dflt, runs), zero, limit, over))
    return lines + [""]


def one_node_table(data):
    """Runs without a link (rate "local"): one row per size, each configuration's median time and
    its ratio to plain Open MPI's default (median of per-round ratios: above 1 is faster)."""
    keys = sorted(k for k in data if k[0] == "local")
    if not keys:
        return []
    cfgs = sorted({c for k in keys for c in data[k]}, key=cfg_order)
    lines = ["### One node, %s ranks, no link: time ms, median (ratio to plain Open MPI's default)"
             % keys[0][1].split("x")[1], "",
             "| size | " + " | ".join(cfg_name(c) for c in cfgs) + " |", "|---:|" + "---:|" * len(cfgs)]
    for key in keys:
        cells = []
        for c in cfgs:
            runs = data[key].get(c, {})
            if not runs:
                cells.append("")
                continue
            med = statistics.median(runs.values())
            r = ratio(data[key].get("mpi:default", {}), runs) if c != "mpi:default" else ""
            cells.append("%.3f" % (med * 1e3) + (" (%s)" % r if r else ""))
        lines.append("| %s | %s |" % (size_name(key[2]), " | ".join(cells)))
    return lines + [""]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.split("\n\n")[1])
    data = load(sys.argv[1:])
    out = one_node_table(data)
    for key in sorted(data, key=lambda k: (k[0], -int(k[1].split("x")[0]), k[1], k[2])):
        if key[0] != "local":
            out += section(key, data[key])
    print("\n".join(out))


if __name__ == "__main__":
    main()
