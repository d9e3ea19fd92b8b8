#!/bin/bash
# speed_table.sh: scripts/bench/speed_table.sh (the main job's speed table) takes the median over rounds at the size asked, the speed-up over the first configuration, and fails on a configuration without rows.
srcdir=$(cd "$(dirname "$0")/.." && pwd)
table=$srcdir/scripts/bench/speed_table.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
    echo "op,np,bytes,time_s,algbw_GBs,busbw_GBs,err,label"
    # plain: 0.9, 0.8, 1.0 s at 64 MiB (median 0.9); e4m3: 0.25, 0.2 (median of two: 0.225)
    echo "allreduce,4,67108864,0.9,0,0,0,layout=4x1;cfg=mpi:ring;round=1;rate=1gbit"
    echo "allreduce,4,16777216,0.1,0,0,0,layout=4x1;cfg=mpi:ring;round=1;rate=1gbit"
    echo "allreduce,4,67108864,0.25,0,0,0,layout=4x1;cfg=e4m3:rsag:ring;round=1;rate=1gbit"
    echo "allreduce,4,67108864,0.8,0,0,0,layout=4x1;cfg=mpi:ring;round=2;rate=1gbit"
    echo "allreduce,4,67108864,0.2,0,0,0,layout=4x1;cfg=e4m3:rsag:ring;round=2;rate=1gbit"
    echo "allreduce,4,67108864,1.0,0,0,0,layout=4x1;cfg=mpi:ring;round=3;rate=1gbit"
} >"$tmp/rows.csv"
want='(median of 3 rounds, slowest rank; 1-minute load 0.5 before the runs)

| configuration | ms per allreduce | speed-up |
| --- | ---: | ---: |
| plain MPI | 900.0 | 1.00x |
| apsmpi e4m3 | 225.0 | 4.00x |'
got=$("$table" "$tmp/rows.csv" 67108864 0.5 "mpi:ring=plain_MPI" "e4m3:rsag:ring=apsmpi_e4m3") || {
    echo "FAILED: speed_table.sh failed on a good CSV"
    exit 1
}
if [ "$got" != "$want" ]; then
    echo "FAILED: speed_table.sh printed"
    diff <(echo "$want") <(echo "$got")
    exit 1
fi
if "$table" "$tmp/rows.csv" 67108864 0.5 "mpi:ring=plain" "mxfp4:rsag:ring=mxfp4" >/dev/null 2>&1; then
    echo "FAILED: speed_table.sh passed with a configuration that has no rows"
    exit 1
fi
echo "ok: the speed table's medians, speed-ups and missing rows"
