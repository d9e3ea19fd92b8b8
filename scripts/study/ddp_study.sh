#!/bin/bash
# ddp_study.sh: runs apps/ddp/train_ddp.py (PyTorch DDP) with DDP's default allreduce and with apsmpi_ddp's MPI hook, library off and preloaded per format, seeds x configurations in interleaved rounds, one machine or fake nodes behind shaped links; one CSV row per epoch.
set -uo pipefail

usage() {
    cat <<'EOF'
usage: scripts/study/ddp_study.sh [options] [-- TRAIN_DDP_ARGS...]
For each round, each seed and each configuration (in that order), one run of
  mpirun -np NP /usr/bin/python3 apps/ddp/train_ddp.py --seed SEED TRAIN_DDP_ARGS...
(with --nodes: flock /tmp/apsmpi-netns.lock scripts/netns_mpirun.sh --np NP --rate RATE -- ...,
one rank per fake node), appending one row per epoch to CSV:
  round,seed,config,np,epoch,time_s,loss,accuracy,same_weights,buckets,compressed,load
Configurations:
  default   DDP's default allreduce (gloo), no library
  mpi       the hook (--hook mpi), no library: MPI's fp32 Iallreduce
  FORMAT    the hook with libapsmpi.so preloaded, APSMPI_FORMAT=FORMAT (e4m3, mxfp4, ...)
compressed: the statistics line's "calls compressed" (summed over ranks). On one machine the
library compresses within it (APSMPI_INTRANODE=compress). load: the 1-minute load before the run.
Options:
  --np N            ranks (default 4)
  --seeds "LIST"    (default "1 2 3 4 5")
  --configs "LIST"  (default "default mpi e4m3 mxfp4")
  --rounds R        (default 1)
  --nodes RATE      fake nodes, one rank each, behind links of RATE (netns_mpirun.sh; root)
  --csv FILE        rows are appended (default results/pytorch_ddp/runs.csv)
  --lib PATH        (default .libs/libapsmpi.so)
  --timeout S       bound of one run (default 600)
  --quiet L         before each run, wait (at most 180 s) until the 1-minute load is below L
  --first-round K   number the rounds from K (default 1)
EOF
}

root=$(cd "$(dirname "$0")/../.." && pwd)
np=4 seeds="1 2 3 4 5" configs="default mpi e4m3 mxfp4" rounds=1 nodes= csv=$root/results/pytorch_ddp/runs.csv
lib=$root/.libs/libapsmpi.so run_timeout=600 quiet= first=1
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) usage; exit 0 ;;
    --np) np=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --csv) csv=$(realpath -m -- "$2"); shift 2 ;;
    --lib) lib=$(realpath -m -- "$2"); shift 2 ;;
    --timeout) run_timeout=$2; shift 2 ;;
    --quiet) quiet=$2; shift 2 ;;
    --first-round) first=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "ddp_study.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
train_args=("$@")
mkdir -p "$(dirname "$csv")"
[ -s "$csv" ] || echo "round,seed,config,np,epoch,time_s,loss,accuracy,same_weights,buckets,compressed,load" >"$csv"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
status=0

for ((round = first; round < first + rounds; round++)); do
    for seed in $seeds; do
        for cfg in $configs; do
            env=() hook=mpi
            case $cfg in
            default) hook=none ;;
            mpi) ;;
            *) env=(-x "LD_PRELOAD=$lib" -x "APSMPI_FORMAT=$cfg" -x APSMPI_STATS=1)
               [ -n "$nodes" ] || env+=(-x APSMPI_INTRANODE=compress) ;;
            esac
            prog=(/usr/bin/python3 "$root/apps/ddp/train_ddp.py" --hook "$hook" --seed "$seed" "${train_args[@]}")
            if [ -n "$quiet" ]; then
                for ((w = 0; w < 180; w += 5)); do
                    awk -v q="$quiet" '{exit !($1 < q)}' /proc/loadavg && break
                    sleep 5
                done
            fi
            load=$(awk '{print $1}' /proc/loadavg)
            if [ -n "$nodes" ]; then
                flock /tmp/apsmpi-netns.lock "$root/scripts/netns_mpirun.sh" --np "$np" --rate "$nodes" \
                    --timeout "$run_timeout" -- "${env[@]}" -- "${prog[@]}" >"$log/out" 2>"$log/err"
            else
                timeout "$run_timeout" mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 \
                    -np "$np" "${env[@]}" "${prog[@]}" >"$log/out" 2>"$log/err"
            fi
            rc=$?
            if [ $rc -ne 0 ]; then
                echo "ddp_study.sh: round $round seed $seed $cfg failed ($rc):" >&2
                tail -20 "$log/out" "$log/err" >&2
                status=1
                continue
            fi
            same=$(awk '/^same weights on every rank/ {print $NF}' "$log/out")
            buckets=$(awk '/^hook buckets/ {print $3}' "$log/out")
            compressed=$(grep -o 'calls compressed [0-9]*' "$log/err" | awk '{print $3}')
            awk -v r="$round" -v s="$seed" -v c="$cfg" -v n="$np" -v same="$same" -v b="${buckets:-0}" \
                -v k="${compressed:-0}" -v l="$load" \
                '/^epoch / {printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", r, s, c, n, $2, $4, $7, $9, same, b, k, l}' \
                "$log/out" | tee -a "$csv"
        done
    done
done
exit $status
