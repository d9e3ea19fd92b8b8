#!/bin/bash
# speed_table.sh: the main job's speed table from a scripts/bench_nodes.sh CSV: per configuration the median over rounds of the time per call at one size, and the speed-up over the first.
# usage: speed_table.sh CSV BYTES LOAD "CFG=NAME" ...   (the first configuration is the baseline)
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 CSV BYTES LOAD CFG=NAME..." >&2; exit 2; }
csv=$1 bytes=$2 load=$3
shift 3
awk -F, -v bytes="$bytes" -v load="$load" -v cfgs="$*" '
    NR > 1 && $3 == bytes {
        split($8, kv, ";")                       # label: layout=4x1;cfg=CFG;round=R;rate=1gbit
        cfg = substr(kv[2], 5); n[cfg]++; t[cfg, n[cfg]] = $4 * 1000
    }
    function median(c,   i, j, k, v) {
        for (i = 1; i <= n[c]; i++) v[i] = t[c, i]
        for (i = 2; i <= n[c]; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { k = v[j]; v[j] = v[j - 1]; v[j - 1] = k }
        return n[c] % 2 ? v[(n[c] + 1) / 2] : (v[n[c] / 2] + v[n[c] / 2 + 1]) / 2
    }
    END {
        k = split(cfgs, pairs, " ")
        for (i = 1; i <= k; i++) {
            p = index(pairs[i], "="); order[i] = substr(pairs[i], 1, p - 1)
            name[i] = substr(pairs[i], p + 1); gsub(/_/, " ", name[i])
            if (!n[order[i]]) { printf "speed_table.sh: no rows of %s at %d bytes\n", order[i], bytes > "/dev/stderr"; exit 1 }
        }
        printf "(median of %d rounds, slowest rank; 1-minute load %s before the runs)\n\n", n[order[1]], load
        print "| configuration | ms per allreduce | speed-up |"
        print "| --- | ---: | ---: |"
        base = median(order[1])
        for (i = 1; i <= k; i++) {
            m = median(order[i])
            printf "| %s | %.1f | %.2fx |\n", name[i], m, base / m
        }
    }' "$csv"
