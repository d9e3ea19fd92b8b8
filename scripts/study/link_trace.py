#!/usr/bin/env python3
"""link_trace.py: summarises a scripts/study/link_trace.sh recording: per call (a burst of traffic), its length, each node link's bytes and utilisation each way, the share of the call each link ran near its rate, and the CPU time of the machine.

usage: scripts/study/link_trace.py OUT_PREFIX RATE_BITS_PER_S [--gap-ms 20] [--min-mb 1]
"""
import sys
from collections import defaultdict


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    prefix, rate = args[0], float(args[1]) / 8.0  # bytes/s
    gap = 0.02
    min_bytes = 1e6
    if "--gap-ms" in args:
        gap = float(args[args.index("--gap-ms") + 1]) / 1e3
    if "--min-mb" in args:
        min_bytes = float(args[args.index("--min-mb") + 1]) * 1e6
    samples = defaultdict(dict)  # t -> port -> (rx, tx); 'cpu' -> fields
    for line in open(prefix + ".links"):
        f = line.split()
        if len(f) < 3:
            continue
        t = float(f[0].replace(",", "."))
        if f[1] == "cpu":
            samples[t]["cpu"] = [int(x) for x in f[2:]]
        elif len(f) == 4:
            samples[t][f[1]] = (int(f[2]), int(f[3]))
    ts = sorted(t for t in samples if "cpu" in samples[t] and len(samples[t]) > 1)
    ports = sorted({p for t in ts for p in samples[t] if p != "cpu"}, key=lambda p: int(p[1:]))
    # per interval: bytes per port and direction, cpu jiffies
    iv = []
    for a, b in zip(ts, ts[1:]):
        if not all(p in samples[a] and p in samples[b] for p in ports):
            continue
        d = {p: (samples[b][p][0] - samples[a][p][0], samples[b][p][1] - samples[a][p][1]) for p in ports}
        cpu = [y - x for x, y in zip(samples[a]["cpu"], samples[b]["cpu"])]
        iv.append((a, b, d, cpu))
    # calls: runs of intervals with traffic, split at gaps of quiet longer than `gap`
    calls, cur, quiet_since = [], [], None
    for it in iv:
        active = sum(x + y for x, y in it[2].values()) > 0.05 * rate * (it[1] - it[0]) * len(ports)
        if active:
            cur.append(it)
            quiet_since = None
        elif cur:
            quiet_since = quiet_since or it[0]
            if it[1] - quiet_since > gap:
                calls.append(cur)
                cur = []
    if cur:
        calls.append(cur)
    rows = []
    for c in calls:
        t0, t1 = c[0][0], c[-1][1]
        T = t1 - t0
        up = {p: sum(it[2][p][0] for it in c) for p in ports}
        down = {p: sum(it[2][p][1] for it in c) for p in ports}
        if sum(up.values()) < min_bytes:
            continue
        near = {}
        for p in ports:
            for k, name in ((0, "up"), (1, "down")):
                busy = sum(it[1] - it[0] for it in c if it[2][p][k] >= 0.8 * rate * (it[1] - it[0]))
                near[(p, name)] = busy / T
        cpu = [sum(it[3][i] for it in c) for i in range(len(c[0][3]))]
        tot = sum(cpu[:8]) or 1
        # /proc/stat: user nice system idle iowait irq softirq steal
        rows.append((T, up, down, near, {"user": (cpu[0] + cpu[1]) / tot, "system": cpu[2] / tot,
                                         "softirq": (cpu[5] + cpu[6]) / tot, "idle": (cpu[3] + cpu[4]) / tot,
                                         "steal": cpu[7] / tot}))
    if not rows:
        sys.exit("link_trace.py: no call found")
    print("%d calls (bursts of traffic of at least %.0f MB); link rate %.1f MB/s each way" % (len(rows), min_bytes / 1e6, rate / 1e6))
    for i, (T, up, down, near, cpu) in enumerate(rows):
        u = sum(up.values()) / len(ports) / (rate * T)
        dn = sum(down.values()) / len(ports) / (rate * T)
        nu = sum(v for (p, k), v in near.items() if k == "up") / len(ports)
        nd = sum(v for (p, k), v in near.items() if k == "down") / len(ports)
        print("call %d: %.1f ms; per link up %.2f MB (%.0f%% of rate over the call, >=80%% of rate %.0f%% of the time), "
              "down %.2f MB (%.0f%%, %.0f%%); cpu user %.0f%% system %.0f%% softirq %.0f%% idle %.0f%% steal %.0f%%"
              % (i, T * 1e3, sum(up.values()) / len(ports) / 1e6, 100 * u, 100 * nu, sum(down.values()) / len(ports) / 1e6,
                 100 * dn, 100 * nd, 100 * cpu["user"], 100 * cpu["system"], 100 * cpu["softirq"], 100 * cpu["idle"],
                 100 * cpu["steal"]))
    try:
        tcp = [l.split() for l in open(prefix + ".tcp")]
        before = {f[0]: f[2] for f in tcp if f[1] == "before"}
        after = {f[0]: f[2] for f in tcp if f[1] == "after"}
        rt = [int(after[n]) - int(before[n]) for n in before if n in after and after[n].isdigit()]
        print("TCP segments retransmitted during the job, per node: %s" % rt)
    except OSError:
        pass


if __name__ == "__main__":
    main()
