#!/usr/bin/python3
# perf_model.py: alpha-beta performance model of compressed allreduce / reduce-scatter, fitted to and set beside the benchmark CSV.
"""Performance model of apsmpi's compressed reductions (standard library only).

As in Dettmers' 8-bit approximations and the APS paper, a ring allreduce of B
bytes over N ranks takes

    T = 2(N-1) alpha + 2(N-1)/N * B / beta          (allreduce)
    T =  (N-1) alpha +  (N-1)/N * B / beta          (reduce_scatter_block)
    T =  (N-1) alpha +  (N-1) * max_share * B / beta (reduce_scatter, uneven
                        blocks: the ring moves the largest block every step)

alpha and beta are fitted, per (op, np, rate, algorithm), to the plain FP32
rows of the benchmark CSV (least squares on the relative error, so small and
large sizes both count). A format of w bits is predicted as

    T_w = T(B w/32)                              network, compressed bytes
        + n/E + n_out/D + (N-1)/N n / S          codec: encode the n = B/4
                                                 elements, decode the result,
                                                 packed sum of what arrives
        + T_scale                                MAX reduction of the scale
                                                 exponents: 2(N-1) alpha (ring,
                                                 as forced for all allreduces)
                                                 plus their few bytes

with E, D, S the codec throughputs of one core (apps/bench_codec --csv) times
the CPU share of a rank: on the measuring machine N ranks share --cores cores,
so a rank gets min(1, cores/N) of one (--cpu-share overrides). The zero-cost
bound T(B w/32) is what the compressed bytes alone cost.

Input: the CSV of scripts/bench/bench_matrix.sh (op,np,bytes,time_s,algbw_GBs,
busbw_GBs,err,label with label "rate=..;cfg=..;alg=.."); rows marked fail=1
are ignored. Output: a table per measured row (stdout, and Markdown with
--md): np, rate, format, bytes, measured and predicted time, their ratio,
measured and predicted speedup over FP32, zero-cost bound; then the model's
projection to large rank counts at 1 and 10 Gbit/s (nominal link, one rank
per node), with parallel scaling for an assumed compute time per step; and
the model of M nodes of L ranks (one link per node shared by its ranks, shared
memory within a node): plain MPI (a flat ring over all ranks; node-aware FP32),
apsmpi's old algorithm (the ring on compressed bytes over all N ranks, a packed
decode-add-encode at every hop) and its new one (FP32 within the node; across
nodes each rank's 1/L part encoded once, summed in FP32 by its owner, the
reduced segment encoded once and gathered), beside the physical limit
2(M-1)/M * B * w/32 / link rate (--node-np, --ranks-per-node, --node-rates).

With --nodes-csv it also sets the node model beside measured layouts (scripts/bench/bench_nodes.sh's
CSV), its link efficiency fitted to their plain rows, and gives its error on each. It models
rsag's schedules at 4-1024 nodes (direct exchange, pairwise and windowed rounds, against the
port's queue) and GPU buffers (a model, not a measurement: the device path's kernels from their
memory traffic at a stated device bandwidth, PCIe copies of the codes, the host exchange; beside
plain MPI with host copies, 8 GPUs per node, 1-100 Gbit/s).

Example:
    /usr/bin/python3 scripts/study/perf_model.py --csv results/bench.csv \\
        --codec-csv results/codec.csv --md results/perf_model.md
"""

import argparse
import csv
import math
import os
import re
import statistics
import sys

DEFAULT_FORMATS = ["fp16", "bf16", "e5m2", "e4m3", "e3m2"]


def format_bits(name):
    """Bits per element on the wire of a format (or zeroW / fp32)."""
    name = name.lower()
    if name == "fp32":
        return 32
    if name in ("fp16", "bf16"):
        return 16
    if name in ("e5m2", "e4m3", "e4m3ieee"):
        return 8
    m = re.fullmatch(r"zero(\d+)", name)
    if m:
        return int(m.group(1))
    m = re.fullmatch(r"e(\d+)m(\d+)(ieee)?", name)
    if m:
        return 1 + int(m.group(1)) + int(m.group(2))
    return None


def parse_rate(rate):
    """tc-style rate (1gbit, 500mbit, 125mbps) -> bytes per second."""
    m = re.fullmatch(r"([0-9.]+)([a-z]*)", rate.lower())
    if not m:
        raise ValueError("bad rate %r" % rate)
    units = {"bit": 1 / 8, "kbit": 1e3 / 8, "mbit": 1e6 / 8, "gbit": 1e9 / 8,
             "tbit": 1e12 / 8, "bps": 1, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9}
    if m.group(2) not in units:
        raise ValueError("bad rate unit in %r" % rate)
    return float(m.group(1)) * units[m.group(2)]


def parse_label(label):
    out = {}
    for part in label.split(";"):
        if "=" in part:
            k, v = part.split("=", 1)
            if k == "env":
                out.setdefault("env", []).append(v)
            else:
                out[k] = v
        elif part:
            out.setdefault("cfg", part)
    return out


def rs_max_share(n):
    """Largest block share of the benchmark's uneven reduce_scatter (weights 3r+2)."""
    w = [3 * r + 2 for r in range(n)]
    return max(w) / sum(w)


def net_coeffs(op, n):
    """(latency steps, bytes factor) of the ring-model time of op over n ranks."""
    if op == "allreduce":
        return 2 * (n - 1), 2.0 * (n - 1) / n
    if op == "reduce_scatter_block":
        return n - 1, (n - 1) / n
    if op == "reduce_scatter":
        return n - 1, (n - 1) * rs_max_share(n)
    raise ValueError("unknown op %r" % op)


def t_net(op, n, nbytes, alpha, beta):
    steps, factor = net_coeffs(op, n)
    return steps * alpha + factor * nbytes / beta


def fit_alpha_beta(op, n, points):
    """Fit T = steps*alpha + factor*B/beta minimising sum((pred-T)/T)^2.
    points: [(bytes, time)]. Returns (alpha, beta, rms relative error)."""
    steps, factor = net_coeffs(op, n)
    # T = c0 + c1*B ; relative weights 1/T
    s00 = s01 = s11 = r0 = r1 = 0.0
    for b, t in points:
        w = 1.0 / (t * t)
        s00 += w
        s01 += w * b
        s11 += w * b * b
        r0 += w * t
        r1 += w * t * b
    det = s00 * s11 - s01 * s01
    c0 = c1 = None
    if len(points) >= 2 and det > 0:
        c0 = (r0 * s11 - r1 * s01) / det
        c1 = (s00 * r1 - s01 * r0) / det
    if c0 is None or c0 < 0 or c1 <= 0:
        # latency-free fit
        c0 = 0.0
        c1 = r1 / s11
    if c1 <= 0:
        c1 = 1e-12
    alpha = c0 / steps if steps else 0.0
    beta = factor / c1 if factor else float("inf")
    rel = [((c0 + c1 * b) - t) / t for b, t in points]
    rms = math.sqrt(sum(x * x for x in rel) / len(rel)) if rel else 0.0
    return alpha, beta, rms


class Codec:
    """Per-core codec throughputs (elements per second) per format."""

    OPS = {"encode": "encode", "quantize": "encode", "pack": "encode",
           "decode": "decode", "dequantize": "decode", "unpack": "decode",
           "sum": "sum", "packed_sum": "sum", "reduce": "sum", "add": "sum"}

    def __init__(self, defaults):
        self.table = {}          # (format, op) -> (elements, elem/s)
        self.defaults = defaults  # op -> elem/s
        self.source = {}

    def load_csv(self, path):
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        for row in rows:
            fmt = (row.get("format") or "").strip().lower()
            op = self.OPS.get((row.get("op") or "").strip().lower())
            if not fmt or not op:
                continue
            try:
                elems = float(row.get("elements") or 0)
            except ValueError:
                elems = 0
            rate = None
            for key in ("gelem_s", "gelem_per_s", "gelems", "gelem/s"):
                if row.get(key):
                    rate = float(row[key]) * 1e9
                    break
            if rate is None and row.get("ms") and elems:
                rate = elems / (float(row["ms"]) * 1e-3)
            if rate is None and row.get("gbs"):
                rate = float(row["gbs"]) * 1e9 / 4
            if not rate or rate <= 0:
                continue
            # keep the largest size measured (the streaming regime)
            old = self.table.get((fmt, op))
            if old is None or elems >= old[0]:
                self.table[(fmt, op)] = (elems, rate)
                self.source[(fmt, op)] = path

    def rate(self, fmt, op):
        got = self.table.get((fmt.lower(), op))
        if got:
            return got[1]
        return self.defaults[op]

    def describe(self, fmt):
        parts = []
        for op in ("encode", "decode", "sum"):
            src = "csv" if (fmt.lower(), op) in self.table else "default"
            parts.append("%s %.3g (%s)" % (op, self.rate(fmt, op) / 1e9, src))
        return ", ".join(parts)


def t_codec(op, n_ranks, nbytes, fmt, codec, share):
    """Encode the rank's elements, decode its result, sum what arrives."""
    n = nbytes / 4.0
    if op == "allreduce":
        n_out = n
    elif op == "reduce_scatter":
        n_out = n * rs_max_share(n_ranks)
    else:
        n_out = n / n_ranks
    n_sum = (n_ranks - 1) / n_ranks * n
    return (n / codec.rate(fmt, "encode") + n_out / codec.rate(fmt, "decode")
            + n_sum / codec.rate(fmt, "sum")) / share


def t_scale(n_ranks, nbytes, alpha, beta, args):
    """The MAX reduction that agrees on the scale exponents."""
    n = nbytes / 4.0
    count = math.ceil(n / args.scale_block) if args.scale_block > 0 else 1
    sbytes = count * args.scale_bytes
    if args.scale_alg == "ring":
        steps = 2 * (n_ranks - 1)
        factor = 2.0 * (n_ranks - 1) / n_ranks
    else:
        steps = 2 * math.ceil(math.log2(max(n_ranks, 2)))
        factor = steps / 2.0
    return steps * alpha + factor * sbytes / beta


def predict(op, n_ranks, nbytes, cfg, alpha, beta, codec, share, args):
    bits = format_bits(cfg)
    if bits is None:
        return None
    if cfg == "fp32":
        return t_net(op, n_ranks, nbytes, alpha, beta)
    wire = nbytes * bits / 32.0
    t = t_net(op, n_ranks, wire, alpha, beta)
    if cfg.startswith("zero"):
        return t
    return t + t_codec(op, n_ranks, nbytes, cfg, codec, share) + t_scale(n_ranks, nbytes, alpha, beta, args)


class Cluster:
    """M nodes of L ranks: one link per node (latency alpha, bandwidth beta each way, shared by
    the node's ranks), shared memory within a node (latency shm_alpha per step, shm_beta per rank)."""

    def __init__(self, nodes, per_node, alpha, beta, shm_alpha, shm_beta):
        self.m, self.l = nodes, per_node
        self.n = nodes * per_node
        self.alpha, self.beta = alpha, beta
        self.shm_alpha, self.shm_beta = shm_alpha, shm_beta

    def intra_phase(self, nbytes):
        """A reduce-scatter or an allgather of nbytes among the L ranks of a node (ring over memory)."""
        if self.l == 1:
            return 0.0
        return (self.l - 1) * self.shm_alpha + (self.l - 1) / self.l * nbytes / self.shm_beta

    def inter_phases(self, nbytes):
        """Both phases of an allreduce of nbytes per node across the M nodes, the L ranks of a node
        each moving 1/L of it at once over the node's one link: 2(M-1)/M nbytes cross each link
        each way, in 2(M-1) steps."""
        return 2 * (self.m - 1) * self.alpha + 2.0 * (self.m - 1) / self.m * nbytes / self.beta


def node_plain_ring(cl, nbytes):
    """Plain MPI, one flat ring over all N ranks, placed node by node: every step waits for the
    hop that crosses a node link, which carries B/N per step, 2(N-1) steps."""
    return 2 * (cl.n - 1) * cl.alpha + 2.0 * (cl.n - 1) / cl.n * nbytes / cl.beta


def node_plain_hier(cl, nbytes):
    """Plain MPI, node-aware: FP32 reduce-scatter in the node, allreduce across nodes of 1/L per
    rank, allgather in the node (the best FP32 can do over these links)."""
    return 2 * cl.intra_phase(nbytes) + cl.inter_phases(nbytes)


def node_old_ring(cl, nbytes, fmt, codec, args):
    """apsmpi's old algorithm: the flat ring on the compressed bytes (every hop, also within a node,
    compressed); each hop decodes, adds and re-encodes the packed partial sum; plus the MAX
    reduction of the scale exponents over all N ranks."""
    bits = format_bits(fmt)
    n = nbytes / 4.0
    t_codec = (n / codec.rate(fmt, "encode") + n / codec.rate(fmt, "decode")
               + (cl.n - 1) / cl.n * n / codec.rate(fmt, "sum"))
    return node_plain_ring(cl, nbytes * bits / 32.0) + t_codec + t_scale(cl.n, nbytes, cl.alpha, cl.beta, args)


def node_new_rsag(cl, nbytes, fmt, codec, args):
    """apsmpi's new algorithm: FP32 reduce-scatter in the node (MPI over shared memory); each rank
    owns 1/L and runs across the nodes a reduce-scatter of its part encoded once (the owner decodes
    every contribution and sums in FP32), then an allgather of the reduced segment encoded once;
    an FP32 allgather in the node. The codec works on 1/L of the buffer per rank. Scale agreement:
    one MAX reduction over the M ranks of the same local index."""
    bits = format_bits(fmt)
    part = nbytes / cl.l
    n = part / 4.0
    t_codec = (n / codec.rate(fmt, "encode")                                # own part, once
               + (cl.m - 1) / cl.m * n / codec.rate(fmt, "decode")          # contributions to my segment
               + n / cl.m / codec.rate(fmt, "encode")                       # reduced segment, once
               + (cl.m - 1) / cl.m * n / codec.rate(fmt, "decode"))         # the others' reduced segments
    t_agree = t_scale(cl.m, part, cl.alpha, cl.beta, args) if cl.m > 1 else 0.0
    return (2 * cl.intra_phase(nbytes) + cl.inter_phases(nbytes * bits / 32.0)
            + t_codec + t_agree)


def node_physical_limit(cl, nbytes, bits):
    """The bytes that must cross each node link each way, 2(M-1)/M of the buffer at this width,
    over the link's bandwidth (no latency, no codec, no memory)."""
    return 2.0 * (cl.m - 1) / cl.m * nbytes * bits / 32.0 / cl.beta


def nodes_section(codec, args):
    """The nodes x ranks-per-node projection: plain MPI (flat ring, node-aware), apsmpi old and new,
    the physical limits, at every rank count and node link rate."""
    nps = [int(x) for x in args.node_np.split(",") if x.strip()]
    fmts = [f.strip() for f in args.node_formats.split(",") if f.strip()]
    L = args.ranks_per_node
    hdr = ["N (nodes x L)", "plain ring", "plain node-aware", "limit fp32"]
    for f in fmts:
        hdr += ["old %s" % f, "new %s" % f]
    hdr += ["limit 8-bit"]
    md = ["## Nodes x ranks per node: old and new algorithm beside plain MPI", "",
          "Allreduce of %s per step over N ranks, %d per node, a full core per rank. Node link: "
          "rate x %.2f each way, %g us per message between nodes; within a node %g us per step and "
          "%g GB/s per rank over shared memory. Time (speedup over the plain FP32 ring). Phases are "
          "added (no overlap of codec and transfer), so the apsmpi columns err on the slow side. "
          "Plain ring: one flat ring over all ranks; plain node-aware: FP32 reduce-scatter in the "
          "node, allreduce across nodes, allgather in the node; old: apsmpi's ring on compressed "
          "bytes over all N ranks; new: node-aware, the bytes that cross nodes encoded once per "
          "phase (rsag). Limit: 2(M-1)/M of the buffer at that width over the link, per direction."
          % (human_bytes(args.proj_bytes), L, args.efficiency, args.node_alpha * 1e6,
             args.shm_alpha * 1e6, args.shm_gbs), ""]
    text = ["Nodes x %d ranks per node (allreduce of %s):" % (L, human_bytes(args.proj_bytes))]
    for rate in [r.strip() for r in args.node_rates.split(",") if r.strip()]:
        beta = parse_rate(rate) * args.efficiency
        rows = []
        for n in nps:
            m = max(1, n // L)
            cl = Cluster(m, L, args.node_alpha, beta, args.shm_alpha, args.shm_gbs * 1e9)
            b = args.proj_bytes
            t_ring = node_plain_ring(cl, b)
            row = ["%d (%d x %d)" % (cl.n, m, L), fmt_time(t_ring),
                   "%s (%.2fx)" % (fmt_time(node_plain_hier(cl, b)), t_ring / node_plain_hier(cl, b)),
                   fmt_time(node_physical_limit(cl, b, 32))]
            for f in fmts:
                for model in (node_old_ring, node_new_rsag):
                    t = model(cl, b, f, codec, args)
                    row.append("%s (%.2fx)" % (fmt_time(t), t_ring / t))
            row.append(fmt_time(node_physical_limit(cl, b, 8)))
            rows.append(row)
        md += ["### %s" % rate, "", md_table(hdr, rows), ""]
        text += ["%s:" % rate, text_table(hdr, rows), ""]
    return md, text


def calibration_section(codec, args):
    """The node model against measured layouts (--nodes-csv: scripts/bench/bench_nodes.sh's CSV, labels
    layout=MxL;cfg=CFG;...;rate=R): per layout and rate, the link efficiency is fitted to the
    plain rows (mpi:ring, zeroW:ring: the bytes of the call over the nominal rate, least squares
    on the ratio); every configuration's median time is then predicted (plain ring, zero-cost,
    apsmpi's old ring, apsmpi's rsag or node path) with the codec rates of one core times the
    machine's share (--cores over the ranks of the whole job, all on this machine), and its error
    given."""
    if not args.nodes_csv:
        return [], []
    if args.nodes_codec_csv:
        codec = Codec(dict(codec.defaults))
        codec.load_csv(args.nodes_codec_csv)
    meas = {}
    for path in args.nodes_csv.split(","):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                lab = parse_label(row.get("label", ""))
                if "layout" not in lab or "fail=1" in row.get("label", "") or row.get("op") != "allreduce":
                    continue
                if args.nodes_label and not any(w in row.get("label", "").split(";")
                                                for w in args.nodes_label.split(",")):
                    continue
                key = (lab["layout"], lab.get("rate", "1gbit"), int(row["bytes"]), lab["cfg"])
                meas.setdefault(key, []).append(float(row["time_s"]))
    rows = []
    for (layout, rate, nbytes) in sorted({k[:3] for k in meas}):
        m, l = (int(x) for x in layout.split("x"))
        nominal = parse_rate(rate)

        def scaled_codec(what):
            """The codec of one rank of this layout for a configuration: one core's rates times the
            cores its threads get, min(threads, cores / ranks) (a share of one core when the ranks
            outnumber the cores). APSMPI_CODEC_THREADS from the configuration, else
            --default-codec-threads; auto as the library and scripts/netns_mpirun.sh make it: each
            node's ranks pinned to cores / nodes CPUs, a rank's threads its node's CPUs over its
            node's ranks, at most 8."""
            opts = dict(x.split("=", 1) for x in what if "=" in x)
            threads = opts.get("APSMPI_CODEC_THREADS", args.default_codec_threads)
            if threads == "auto":
                threads = max(1, min(8, max(1, int(args.cores) // m) // l))
            share = min(float(threads), args.cores / (m * l))
            scaled = Codec({k: v * share for k, v in codec.defaults.items()})
            scaled.table = {k: (e, r * share) for k, (e, r) in codec.table.items()}
            return scaled
        # fit the efficiency of the link to the plain rows of this layout
        plain = []
        for (lay, rt, b, cfg), ts in meas.items():
            if (lay, rt, b) != (layout, rate, nbytes):
                continue
            what = cfg.split(":")
            if what[0] == "mpi" and what[1] == "ring":
                plain.append((statistics.median(ts), nbytes))
            elif what[0].startswith("zero") and what[-1] == "ring":
                plain.append((statistics.median(ts), nbytes * format_bits(what[0]) / 32.0))
        if not plain:
            continue
        probe = Cluster(m, l, args.node_alpha, nominal, args.shm_alpha, args.shm_gbs * 1e9)
        # time = node_plain_ring at beta = eff * nominal: solve eff by least squares on 1/t
        effs = [node_plain_ring(probe, b) / t for t, b in plain]
        eff = statistics.median(effs)
        cl = Cluster(m, l, args.node_alpha, nominal * eff, args.shm_alpha, args.shm_gbs * 1e9)
        for (lay, rt, b, cfg), ts in sorted(meas.items()):
            if (lay, rt, b) != (layout, rate, nbytes):
                continue
            what = cfg.split(":")
            if what[0] == "defaults":  # the library's defaults: e4m3, rsag (or the node path)
                what = ["e4m3", "rsag"]
            t = statistics.median(ts)
            if what[0] == "mpi":
                pred, how = (node_plain_ring(cl, b), "plain ring") if what[1] == "ring" else (None, "")
            elif what[0].startswith("zero"):
                pred, how = node_plain_ring(cl, b * format_bits(what[0]) / 32.0), "plain ring, compressed bytes"
            elif format_bits(what[0]) and len(what) > 1 and what[1] == "ring":
                pred, how = node_old_ring(cl, b, what[0], scaled_codec(what), args), "old ring"
            elif format_bits(what[0]):
                pred, how = node_new_rsag(cl, b, what[0], scaled_codec(what), args), "rsag" if l == 1 else "node path"
            else:
                pred, how = None, ""
            if pred is None:
                continue
            rows.append([layout, rate, human_bytes(b), cfg, str(len(ts)), fmt_time(t), how, fmt_time(pred),
                         "%+.0f%%" % (100.0 * (pred - t) / t), "%.2f" % eff])
    hdr = ["layout", "rate", "bytes", "configuration", "runs", "measured (median)", "model", "predicted",
           "error", "link efficiency"]
    md = ["## The node model against the measurements", "",
          "Measured medians (%s) beside the node model, its link efficiency fitted per layout to the "
          "plain rows (the plain ring and the zero-cost bounds), the codec rates of one core times the "
          "share of the machine's %g cores a rank's codec threads get (codec: %s%s). Error: (predicted "
          "- measured) / measured." % (args.nodes_csv, args.cores, args.nodes_codec_csv or args.codec_csv,
                                       "" if args.default_codec_threads == "1" else
                                       "; APSMPI_CODEC_THREADS where a row does not name it: %s"
                                       % args.default_codec_threads), "",
          md_table(hdr, rows), ""]
    return md, ["Node model against the measurements:", text_table(hdr, rows), ""]


def gpu_kernel_bytes(n, bits):
    """Device-memory bytes the device path's kernels move for n floats (kernels/codec_kernels.cu):
    the block maxima read the input (4n), the encoding reads it again and writes the codes
    (4n + n w/8), the decoding of the result reads the codes and writes the floats (n w/8 + 4n)."""
    return 12.0 * n + 2.0 * n * bits / 8.0


def gpu_plain_host_copies(cl, nbytes, args):
    """Plain MPI with host copies (what a job does without a CUDA-aware MPI): the whole FP32
    bucket down over PCIe, MPI's flat ring over all ranks, the result back up; nothing overlaps."""
    pcie = args.pcie_gbs * 1e9
    return 2.0 * nbytes / pcie + node_plain_ring(cl, nbytes)


def gpu_apsmpi_parts(cl, nbytes, fmt, codec, args):
    """apsmpi's device path as it is (README "GPU buffers"): block maxima and encoding on the GPU,
    only the codes over PCIe, the exchange on the host (flat rsag over all N ranks: GPU buffers on
    several nodes do not take the node path), the result's codes back over PCIe and decoded on the
    GPU. Returns the time of each resource: GPU kernels, PCIe (each direction its own lanes), host
    codec (the owner's decoding and FP32 sum of its segment, its one encoding), node link, and one
    stage (4 MiB of floats) of fill."""
    bits = format_bits(fmt)
    n = nbytes / 4.0
    wire = n * bits / 8.0
    gpu = gpu_kernel_bytes(n, bits) / (args.gpu_bw_gbs * 1e9)
    pcie = wire / (args.pcie_gbs * 1e9)
    host = ((cl.n - 1) / cl.n * n / codec.rate(fmt, "decode") + n / cl.n / codec.rate(fmt, "encode"))
    # flat direct exchange: each of the node's L ranks sends (N-L)/N of its codes off the node in
    # each of the two phases, all through the node's one link
    net = 2 * cl.alpha + 2.0 * cl.l * (cl.n - cl.l) / cl.n * wire / cl.beta
    shm = 2.0 * (cl.l - 1) / cl.n * wire / cl.shm_beta
    stage = min(n, 1 << 20)
    fill = gpu_kernel_bytes(stage, bits) / (args.gpu_bw_gbs * 1e9) + 2 * stage * bits / 8.0 / (args.pcie_gbs * 1e9)
    return {"gpu": gpu, "pcie": pcie, "host": host, "net": net + shm, "fill": fill}


def gpu_apsmpi(cl, nbytes, fmt, codec, args):
    """The device path's time: its stages overlap (the encoding runs ahead in stages, copies and
    decodes queue as pieces arrive), so the slowest resource sets the pace, plus one stage of fill."""
    p = gpu_apsmpi_parts(cl, nbytes, fmt, codec, args)
    return max(p["gpu"], p["pcie"], p["host"], p["net"]) + p["fill"]


def gpu_section(codec, args):
    """GPU buffers, L ranks (GPUs) per node: plain MPI with host copies against apsmpi's device path,
    at every node link rate. A model: nothing here was measured on a GPU."""
    L = args.gpu_ranks_per_node
    fmts = [f.strip() for f in args.node_formats.split(",") if f.strip()]
    nps = [int(x) for x in args.gpu_np.split(",") if x.strip()]
    b = args.proj_bytes
    hdr = ["N (nodes x L)", "rate", "plain MPI + host copies"]
    for f in fmts:
        hdr += ["apsmpi %s" % f, "%s bound by" % f]
    md = ["## GPU buffers (a model, not a measurement)", "",
          "Allreduce of %s of floats in GPU memory per step, %d GPUs (ranks) per node. Stated, not "
          "measured: device memory %g GB/s (the kernels are memory-bound: block maxima, encoding and "
          "decoding move 12 + w/4 bytes per element, so the GPU codec runs at %g G elements/s for 8 "
          "bits), PCIe %g GB/s each way per GPU, node link rate x %.2f, %g us per message. The host "
          "codec is the measured CPU codec (one core per rank). Plain MPI: the bucket copied to host "
          "memory and back around MPI's flat ring over all ranks (no overlap). apsmpi: the device path "
          "as it is, GPU kernels, PCIe copies of the codes and the host exchange (a flat rsag over "
          "all ranks) overlapped in stages; the column after each format names the resource that "
          "sets its pace. Checked against one H200 (results/gpu_h200.md): its kernels took 14%% "
          "longer than 2000 GB/s gives at 64 MiB and 2.5%% longer at 256 MiB; its PCIe Gen5 link "
          "moved 52-55 GB/s (the default here is a Gen4 x16 link's)."
          % (human_bytes(b), L, args.gpu_bw_gbs, args.gpu_bw_gbs / gpu_kernel_bytes(1, 8),
             args.pcie_gbs, args.efficiency, args.node_alpha * 1e6), ""]
    text = ["GPU buffers, %d per node (model; allreduce of %s):" % (L, human_bytes(b))]
    rows = []
    names = {"gpu": "GPU kernels", "pcie": "PCIe", "host": "host codec", "net": "node link"}
    for n in nps:
        m = max(1, n // L)
        for rate in [r.strip() for r in args.gpu_rates.split(",") if r.strip()]:
            beta = parse_rate(rate) * args.efficiency
            cl = Cluster(m, L, args.node_alpha, beta, args.shm_alpha, args.shm_gbs * 1e9)
            t_plain = gpu_plain_host_copies(cl, b, args)
            row = ["%d (%d x %d)" % (cl.n, m, L), rate, fmt_time(t_plain)]
            for f in fmts:
                parts = gpu_apsmpi_parts(cl, b, f, codec, args)
                t = gpu_apsmpi(cl, b, f, codec, args)
                bound = max(("gpu", "pcie", "host", "net"), key=lambda k: parts[k])
                row += ["%s (%.2fx)" % (fmt_time(t), t_plain / t), names[bound]]
            rows.append(row)
    md += [md_table(hdr, rows), "",
           "With %d ranks per node the flat exchange sends every rank's own codes across the node "
           "link, %d times the bytes of a node-aware exchange of node sums: at 8 bits that is %.1fx the "
           "FP32 bytes of plain MPI's ring, so across nodes the device path loses to plain MPI wherever "
           "the link binds; it wins where PCIe and the host copies bind (one node, fast links). A node "
           "path for GPU buffers (FP32 sums of the node's GPUs first) would move 1/%d of these bytes."
           % (L, L, L * 8 / 32.0, L), ""]
    text += [text_table(hdr, rows), ""]
    return md, text


def schedule_section(args):
    """rsag's reduce-scatter schedules at one rank per node, 64-1024 nodes: all messages at once (the
    direct exchange of today) against pairwise rounds (one peer per link direction at a time)."""
    b = args.proj_bytes
    bits = 8
    md = ["## rsag's schedule at scale (one rank per node, a model)", "",
          "Allreduce of %s at 8 bits. Each rank sends N-1 messages in each phase; in the direct "
          "exchange they are all in flight at once, so every owner's link takes N-1 flows at once "
          "(incast); in pairwise rounds a rank sends to one peer and receives from one at a time. A "
          "switch port (here the tbf queue of %g ms at the rate) overflows when the flows into it "
          "hold more than its queue: at least 2 segments of %d B each even at the smallest TCP "
          "window, so past that many concurrent flows every round of windows loses packets, and "
          "a lost tail costs a retransmission timeout (200 ms, Linux's minimum). Time: 2 phases of "
          "N-1 messages of B w/32/N bytes; pairwise adds %g us per round. Windowed rounds: W peers "
          "at a time (the next W ranks down the ring), W the fewest that hide the latency "
          "(W messages cover alpha x bandwidth), at most a quarter of what the queue holds: "
          "ceil((N-1)/W) rounds a phase."
          % (human_bytes(b), args.queue_ms, args.mss, args.node_alpha * 1e6), ""]
    hdr = ["nodes", "rate", "message", "flows into a port: direct / pairwise", "queue holds (flows)",
           "direct exchange", "pairwise rounds", "windowed rounds (W)", "ring (2(N-1) steps)"]
    rows = []
    for n in [int(x) for x in args.schedule_np.split(",") if x.strip()]:
        for rate in [r.strip() for r in args.node_rates.split(",") if r.strip()]:
            beta = parse_rate(rate) * args.efficiency
            wire = b * bits / 32.0
            msg = wire / n
            queue = parse_rate(rate) * args.queue_ms / 1e3 + max(65536, parse_rate(rate) / 1000)
            holds = int(queue // (2 * args.mss))
            bw = 2.0 * (n - 1) / n * wire / beta
            direct = 2 * args.node_alpha + bw
            if n - 1 > holds:
                direct = "%s + RTO stalls" % fmt_time(direct)
            else:
                direct = fmt_time(direct)
            pair = 2 * (n - 1) * args.node_alpha + bw
            w = max(1, min(n - 1, math.ceil(args.node_alpha * beta / msg), max(1, holds // 4)))
            windowed = 2 * math.ceil((n - 1) / w) * args.node_alpha + bw
            rows.append([str(n), rate, human_bytes(msg), "%d / 1" % (n - 1), str(holds), direct, fmt_time(pair),
                         "%s (%d)" % (fmt_time(windowed), w), fmt_time(2 * (n - 1) * args.node_alpha + bw)])
    md += [md_table(hdr, rows), ""]
    return md, ["rsag schedule at scale (model):", text_table(hdr, rows), ""]


def fmt_time(t):
    if t is None:
        return "-"
    if t >= 1:
        return "%.3f s" % t
    if t >= 1e-3:
        return "%.2f ms" % (t * 1e3)
    return "%.1f us" % (t * 1e6)


def fmt_x(x):
    return "-" if x is None else "%.2fx" % x


def human_bytes(b):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= size and b % size == 0:
            return "%d %s" % (b // size, unit)
    return "%d B" % b


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def text_table(header, rows):
    cols = [header] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cols) for i in range(len(header))]
    lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths))]
    for r in cols[1:]:
        lines.append("  ".join(c.rjust(w) for c, w in zip(r, widths)))
    return "\n".join(lines)


def load_bench(path):
    groups = {}  # (op, np, rate, alg) -> cfg -> bytes -> [times]
    skipped = 0
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            lab = parse_label(row.get("label", ""))
            if lab.get("fail"):
                skipped += 1
                continue
            try:
                key = (row["op"], int(row["np"]), lab.get("rate", "?"), lab.get("alg", "?"))
                b = int(row["bytes"])
                t = float(row["time_s"])
            except (KeyError, ValueError):
                skipped += 1
                continue
            cfg = lab.get("cfg", "fp32").lower()
            if cfg == "mpi":
                cfg = "fp32"
            if lab.get("env"):
                cfg = cfg + "[" + ",".join(lab["env"]) + "]"
            groups.setdefault(key, {}).setdefault(cfg, {}).setdefault(b, []).append(t)
    return groups, skipped


def base_cfg(cfg):
    return cfg.split("[", 1)[0]


def build_parser():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--csv", default="results/bench.csv", help="benchmark CSV (default %(default)s)")
    ap.add_argument("--codec-csv", help="output of apps/bench_codec --csv (per-core throughputs)")
    ap.add_argument("--encode-gelems", type=float, default=1.0,
                    help="encode Gelem/s per core when the codec CSV lacks it (default %(default)s)")
    ap.add_argument("--decode-gelems", type=float, default=1.5,
                    help="decode Gelem/s per core when the codec CSV lacks it (default %(default)s)")
    ap.add_argument("--sum-gelems", type=float, default=0.6,
                    help="packed-sum Gelem/s per core when the codec CSV lacks it (default %(default)s)")
    ap.add_argument("--cores", type=float, default=2,
                    help="cores of the machine that ran all ranks of the measurements (default %(default)s)")
    ap.add_argument("--cpu-share", type=float,
                    help="fraction of a core one rank gets (default min(1, cores/np))")
    ap.add_argument("--scale-block", type=int, default=4096,
                    help="elements per scale exponent, 0 = one per call (default %(default)s)")
    ap.add_argument("--scale-bytes", type=float, default=4,
                    help="bytes per exponent in the MAX reduction (default %(default)s)")
    ap.add_argument("--scale-alg", choices=["ring", "tree"], default="ring",
                    help="algorithm of the MAX reduction: ring 2(N-1) alpha (forced ring), "
                         "tree 2 log2(N) alpha (default %(default)s)")
    ap.add_argument("--sizes", help="comma-separated byte sizes to show (default all)")
    ap.add_argument("--md", help="write the tables as Markdown to this file")
    ap.add_argument("--summary", action="store_true",
                    help="print only the fits and, per group and format, the largest size "
                         "(no projection); --md still gets everything")
    ap.add_argument("--proj-np", default="8,16,32,64,96,128,256,512,1024",
                    help="rank counts of the projection (default %(default)s)")
    ap.add_argument("--proj-rates", default="1gbit,10gbit", help="(default %(default)s)")
    ap.add_argument("--proj-bytes", type=int, default=100 << 20,
                    help="bytes reduced per step in the projection (default %(default)s)")
    ap.add_argument("--proj-formats", default=",".join(DEFAULT_FORMATS), help="(default %(default)s)")
    ap.add_argument("--proj-source", choices=["nominal", "fit"], default="nominal",
                    help="projection link: nominal = rate x --efficiency with the fitted alpha; "
                         "fit = alpha and beta fitted at the largest measured np (default %(default)s)")
    ap.add_argument("--efficiency", type=float, default=0.94,
                    help="TCP goodput / link rate for the nominal link (default %(default)s)")
    ap.add_argument("--alpha", type=float,
                    help="projection latency per step, s (default: fitted at the largest np, "
                         "else 50e-6)")
    ap.add_argument("--compute-s", type=float, default=0.2,
                    help="compute time per step for the parallel-scaling projection, s (default %(default)s)")
    ap.add_argument("--nodes-csv", help="comma-separated CSVs of scripts/bench/bench_nodes.sh to calibrate the node model on")
    ap.add_argument("--nodes-label", help="comma-separated label fields (run=h200-d): only the --nodes-csv rows "
                                          "whose label has one of them")
    ap.add_argument("--default-codec-threads", default="1",
                    help="APSMPI_CODEC_THREADS of the --nodes-csv rows that do not name it: a number, or auto "
                         "(default %(default)s: the measurements before the codec had threads)")
    ap.add_argument("--nodes-codec-csv",
                    help="apps/bench_codec --csv of the machine that measured --nodes-csv (default: --codec-csv)")
    ap.add_argument("--gpu-bw-gbs", type=float, default=2000.0,
                    help="device memory bandwidth the GPU kernels reach, GB/s (stated: an H100 PCIe's "
                         "HBM2e; default %(default)s)")
    ap.add_argument("--pcie-gbs", type=float, default=25.0,
                    help="PCIe bandwidth per GPU each way, GB/s (stated: 4.0 x16; default %(default)s)")
    ap.add_argument("--gpu-ranks-per-node", type=int, default=8, help="GPUs per node (default %(default)s)")
    ap.add_argument("--gpu-np", default="16,64,512", help="GPU rank counts (default %(default)s)")
    ap.add_argument("--gpu-rates", default="1gbit,10gbit,25gbit,100gbit", help="(default %(default)s)")
    ap.add_argument("--schedule-np", default="4,64,256,1024", help="node counts of the schedule table")
    ap.add_argument("--queue-ms", type=float, default=5.0,
                    help="queue of a switch port in ms at the rate (scripts/netns_mpirun.sh's tbf; default %(default)s)")
    ap.add_argument("--mss", type=int, default=1448, help="TCP segment payload, bytes (default %(default)s)")
    ap.add_argument("--node-np", default="64,256,1024",
                    help="rank counts of the nodes x ranks-per-node projection (default %(default)s)")
    ap.add_argument("--ranks-per-node", type=int, default=8,
                    help="ranks per node in that projection (default %(default)s)")
    ap.add_argument("--node-rates", default="1gbit,10gbit,100gbit",
                    help="node link rates of that projection (default %(default)s)")
    ap.add_argument("--node-formats", default="fp16,e4m3,e3m2,e2m1",
                    help="formats of that projection (default %(default)s)")
    ap.add_argument("--node-alpha", type=float, default=25e-6,
                    help="latency of one message between nodes in that projection, s (default %(default)s)")
    ap.add_argument("--shm-alpha", type=float, default=2e-6,
                    help="latency of one step over shared memory within a node, s (default %(default)s)")
    ap.add_argument("--shm-gbs", type=float, default=10.0,
                    help="bandwidth of one rank's shared-memory transfers within a node, GB/s "
                         "(default %(default)s)")
    return ap


def load_codec(args):
    codec = Codec({"encode": args.encode_gelems * 1e9, "decode": args.decode_gelems * 1e9,
                   "sum": args.sum_gelems * 1e9})
    if args.codec_csv:
        codec.load_csv(args.codec_csv)
    return codec


def intro_lines(args, skipped):
    return ["# apsmpi performance model", "",
            "Benchmark CSV: `%s`%s. Codec: `%s`. Cores of the measuring machine: %g "
            "(a rank gets %s of a core). Scale exponents: %s, %g B each, %s MAX reduction."
            % (args.csv, " (%d failed/unreadable rows ignored)" % skipped if skipped else "",
               args.codec_csv or "defaults", args.cores,
               "%g" % args.cpu_share if args.cpu_share else "min(1, cores/np)",
               "one per %d elements" % args.scale_block if args.scale_block else "one per call",
               args.scale_bytes, args.scale_alg), ""]


def fit_groups(groups):
    """alpha and beta of every (op, np, rate, alg) with FP32 rows; and the table of them."""
    fits, fit_rows = {}, []
    for key in sorted(groups):
        op, n, rate, alg = key
        fp = groups[key].get("fp32")
        if not fp:
            continue
        pts = [(b, statistics.median(ts)) for b, ts in sorted(fp.items())]
        alpha, beta, rms = fit_alpha_beta(op, n, pts)
        fits[key] = (alpha, beta)
        fit_rows.append([op, n, rate, alg, "%.1f" % (alpha * 1e6), "%.4f" % (beta / 1e9),
                         "%.0f%%" % (100 * beta / parse_rate(rate)) if rate != "?" else "-",
                         "%.1f%%" % (100 * rms), len(pts)])
    return fits, fit_rows


def fits_section(fit_rows, codec):
    header = ["op", "np", "rate", "alg", "alpha_us", "beta_GB/s", "beta/link", "rms_rel_err", "sizes"]
    codec_rows = [[f, codec.describe(f)] for f in DEFAULT_FORMATS]
    md = ["## Link parameters fitted to plain FP32", "", md_table(header, fit_rows), "",
          "Codec throughput per core, Gelem/s: ", ""] + ["- %s: %s" % (f, d) for f, d in codec_rows] + [""]
    text = ["Link parameters fitted to plain FP32:", text_table(header, fit_rows), "",
            "Codec throughput per core (Gelem/s):"] + ["  %-6s %s" % (f, d) for f, d in codec_rows] + [""]
    return md, text


COMPARE_HEADER = ["op", "np", "rate", "alg", "format", "bytes", "measured", "predicted", "meas/pred",
                  "speedup_meas", "speedup_pred", "zero_cost_bound"]


def config_order(cfg):
    """FP32 first, then the formats from widest to narrowest, then the zero-cost bounds."""
    bc = base_cfg(cfg)
    return (0 if bc == "fp32" else 2 if bc.startswith("zero") else 1, -(format_bits(bc) or 0), cfg)


def zero_cost_cell(cfgs, op, n, b, bits, t32m, t32p, alpha, beta):
    """FP32 time over the zero-cost bound of the same width: measured when there is a zeroW row."""
    z = cfgs.get("zero%d" % bits, {}).get(b)
    if z and t32m:
        return "%.2fx" % (t32m / statistics.median(z))
    return "%.2fx (model)" % (t32p / t_net(op, n, b * bits / 32.0, alpha, beta))


def compare_rows(groups, fits, codec, args, show):
    """One row per measured (group, format, size): measured beside predicted; the byte count last."""
    rows = []
    for key in sorted(groups):
        if key not in fits:
            continue
        op, n, rate, alg = key
        alpha, beta = fits[key]
        share = args.cpu_share if args.cpu_share else min(1.0, args.cores / n)
        cfgs = groups[key]
        base = {b: statistics.median(ts) for b, ts in cfgs["fp32"].items()}
        for cfg in sorted(cfgs, key=config_order):
            bc = base_cfg(cfg)
            bits = format_bits(bc)
            for b in sorted(cfgs[cfg]):
                if show and b not in show:
                    continue
                tm = statistics.median(cfgs[cfg][b])
                tp = predict(op, n, b, bc, alpha, beta, codec, share, args)
                t32m = base.get(b)
                t32p = predict(op, n, b, "fp32", alpha, beta, codec, share, args)
                zb = None
                if bits and bits < 32 and not bc.startswith("zero"):
                    zb = zero_cost_cell(cfgs, op, n, b, bits, t32m, t32p, alpha, beta)
                rows.append([op, n, rate, alg, cfg, human_bytes(b), fmt_time(tm), fmt_time(tp),
                             "%.2f" % (tm / tp) if tp else "-", fmt_x(t32m / tm if t32m else None),
                             fmt_x(t32p / tp if tp else None), zb or "-", b])
    return rows


def compare_section(rows, summary):
    """Markdown with every row; text with every row, or only each group's largest size (summary)."""
    shown = rows
    if summary:
        largest = {}
        for r in rows:
            largest[tuple(r[:4])] = max(largest.get(tuple(r[:4]), 0), r[-1])
        shown = [r for r in rows if r[-1] == largest[tuple(r[:4])]]
    title = "Measured vs predicted at the largest size:" if summary else "Measured vs predicted:"
    text = [title, text_table(COMPARE_HEADER, [r[:-1] for r in shown]), ""]
    md = ["## Measured vs predicted", "",
          "speedup = FP32 time / this time at the same size; zero_cost_bound = FP32 time / "
          "time of plain MPI on the compressed byte count (measured zeroW rows; model if absent).", "",
          md_table(COMPARE_HEADER, [r[:-1] for r in rows]), ""]
    return md, text


def projection_link(fits, rate, args):
    """(alpha, beta, description) of the projection's link at this rate."""
    cand = [k for k in fits if k[0] == "allreduce" and k[2] == rate]
    ring = [k for k in cand if k[3] == "ring"] or cand
    if ring:
        best = max(ring, key=lambda k: k[1])
        alpha, fbeta = fits[best]
        src = "alpha %.1f us fitted at np=%d" % (alpha * 1e6, best[1])
    else:
        alpha, fbeta = 50e-6, None
        src = "alpha %.1f us assumed (no FP32 measurement at %s)" % (alpha * 1e6, rate)
    if args.alpha is not None:
        alpha = args.alpha
        src = "alpha %.1f us given" % (alpha * 1e6)
    if args.proj_source == "fit" and fbeta:
        beta = fbeta
        src += ", beta %.3f GB/s fitted" % (beta / 1e9)
    else:
        beta = parse_rate(rate) * args.efficiency
        src += ", beta %.3f GB/s nominal" % (beta / 1e9)
    return alpha, beta, src


def projection_tables(alpha, beta, codec, args, proj_np, proj_formats):
    """Allreduce time and parallel scaling of every rank count and format, one rank per node."""
    trows, srows = [], []
    for n in proj_np:
        t32 = predict("allreduce", n, args.proj_bytes, "fp32", alpha, beta, codec, 1.0, args)
        tr = [n, fmt_time(t32)]
        sr = [n, "%.1f" % (n * args.compute_s / (args.compute_s + t32))]
        for f in proj_formats:
            t = predict("allreduce", n, args.proj_bytes, f, alpha, beta, codec, 1.0, args)
            if t is None:
                tr.append("?")
                sr.append("?")
                continue
            tr.append("%s (%.2fx)" % (fmt_time(t), t32 / t))
            sr.append("%.1f" % (n * args.compute_s / (args.compute_s + t)))
        trows.append(tr)
        srows.append(sr)
    return trows, srows


def projection_section(fits, codec, args):
    proj_np = [int(x) for x in args.proj_np.split(",") if x.strip()]
    proj_formats = [f.strip() for f in args.proj_formats.split(",") if f.strip()]
    md = ["## Projection to large rank counts", "",
          "Ring allreduce of %s per step, one rank per node (a full core for the codec), "
          "link %s. Parallel scaling = N * Tc / (Tc + T_allreduce) with compute Tc = %g s per step and no "
          "overlap (as in Dettmers' speedup model)."
          % (human_bytes(args.proj_bytes),
             "rate x %.2f with the fitted alpha" % args.efficiency if args.proj_source == "nominal"
             else "alpha and beta fitted at the largest measured np", args.compute_s), ""]
    text = ["Projection (allreduce of %s per step, compute %g s):" % (human_bytes(args.proj_bytes), args.compute_s)]
    for rate in [r.strip() for r in args.proj_rates.split(",") if r.strip()]:
        alpha, beta, src = projection_link(fits, rate, args)
        trows, srows = projection_tables(alpha, beta, codec, args, proj_np, proj_formats)
        hdr = ["N", "fp32"] + proj_formats
        md += ["### %s (%s)" % (rate, src), "", "Allreduce time (speedup over FP32):", "",
               md_table(hdr, trows), "", "Parallel scaling (ideal = N):", "", md_table(hdr, srows), ""]
        text += ["%s (%s): allreduce time (speedup over FP32)" % (rate, src), text_table(hdr, trows),
                 "%s: parallel scaling N*Tc/(Tc+T)" % rate, text_table(hdr, srows), ""]
    return md, text


def write_md(path, md):
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(md) + "\n")
    print("perf_model.py: wrote %s" % path)


def main():
    args = build_parser().parse_args()
    codec = load_codec(args)
    if not os.path.exists(args.csv):
        sys.exit("perf_model.py: %s not found (run scripts/bench/bench_matrix.sh first)" % args.csv)
    groups, skipped = load_bench(args.csv)
    show = {int(s) for s in args.sizes.split(",") if s.strip()} if args.sizes else None

    fits, fit_rows = fit_groups(groups)
    md_fits, text_fits = fits_section(fit_rows, codec)
    md_cmp, text_cmp = compare_section(compare_rows(groups, fits, codec, args, show), args.summary)
    md_proj, text_proj = projection_section(fits, codec, args)
    md_nodes, text_nodes = nodes_section(codec, args)
    md_gpu, text_gpu = gpu_section(codec, args)
    md_cal, text_cal = calibration_section(codec, args)
    md_sched, text_sched = schedule_section(args)

    text = text_fits + text_cmp + text_cal
    if not args.summary:
        text += text_proj + text_nodes + text_sched + text_gpu
    print("\n".join(text))
    if args.md:
        write_md(args.md, intro_lines(args, skipped) + md_fits + md_cmp + md_cal + md_proj + md_nodes + md_sched + md_gpu)


if __name__ == "__main__":
    main()
