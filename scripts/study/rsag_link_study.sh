#!/bin/bash
# rsag_link_study.sh: times rsag, its prototype schedules and the bounds on fake nodes (scripts/netns_mpirun.sh), each run with its link trace (scripts/study/link_trace.sh), in interleaved rounds.
# Settings from the environment: NP, PPN (ranks per node), RATE, SIZE, CFGS, ROUNDS, LIB (a build
# of the library with results/rsag_schedule_prototype.patch applied: its per-piece trace,
# RSAG_TRACE=1, and its opt-in schedules RSAG_PM, RSAG_WINDOW, RSAG_AHEAD), OUT (folder of the
# traces), TRACE_BPS (the link rate in bit/s for link_trace.py). The patch applies to rsag.c as
# it was before the algorithm interface (main before 20a0c9f); its pm2 is now rsag's default
# schedule (APSMPI_RSAG_WINDOW=2; APSMPI_RSAG_WINDOW=0 is the earlier one). Every run's time is the
# benchmark's (median of 5 calls, slowest rank), in OUT/tr_*.csv; results/nodes.md says what
# each configuration is. Run as root, alone on the machine (through quiet, the lock of this
# workplace's timings).
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/rsag_link_study}
mkdir -p "$OUT"
export OMPI_MCA_btl_base_warn_component_unused=0 OMPI_MCA_rtc=^hwloc
R="--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4"
SIZE=${SIZE:-64M}; NP=${NP:-4}; PPN=${PPN:-1}; RATE=${RATE:-1gbit}
B="apps/apsmpi_bench --op allreduce --min $SIZE --max $SIZE --iters 5 --min-iters 3 --warmup 1"
L=${LIB:?LIB: the library built with results/rsag_schedule_prototype.patch}
CFGS=${CFGS:-"zero ring rsag pm1 pm2 w1"}
echo "load before: $(cat /proc/loadavg)"
for round in ${ROUNDS:-1 2 3}; do
for cfg in $CFGS; do
  fmt=e4m3
  case $cfg in
    rsag) env=(-x LD_PRELOAD=$L -x APSMPI_FORMAT=$fmt -x APSMPI_ALGORITHM=rsag -x RSAG_TRACE=1); extra=(--tol 0.19) ;;
    pm1) env=(-x LD_PRELOAD=$L -x APSMPI_FORMAT=$fmt -x RSAG_PM=1 -x RSAG_WINDOW=1 -x RSAG_TRACE=1); extra=(--tol 0.19) ;;
    pm2) env=(-x LD_PRELOAD=$L -x APSMPI_FORMAT=$fmt -x RSAG_PM=1 -x RSAG_WINDOW=2 -x RSAG_TRACE=1); extra=(--tol 0.19) ;;
    a1) env=(-x LD_PRELOAD=$L -x APSMPI_FORMAT=$fmt -x RSAG_PM=1 -x RSAG_AHEAD=1 -x RSAG_TRACE=1); extra=(--tol 0.19) ;;
    a2) env=(-x LD_PRELOAD=$L -x APSMPI_FORMAT=$fmt -x RSAG_PM=1 -x RSAG_AHEAD=2 -x RSAG_TRACE=1); extra=(--tol 0.19) ;;
    a2w2) env=(-x LD_PRELOAD=$L -x APSMPI_FORMAT=$fmt -x RSAG_PM=1 -x RSAG_AHEAD=2 -x RSAG_WINDOW=2 -x RSAG_TRACE=1); extra=(--tol 0.19) ;;
    fp16a2) env=(-x LD_PRELOAD=$L -x APSMPI_FORMAT=fp16 -x RSAG_PM=1 -x RSAG_AHEAD=2 -x RSAG_TRACE=1); extra=(--tol 1.5e-3) ;;
    w1) env=(-x LD_PRELOAD=$L -x APSMPI_FORMAT=$fmt -x RSAG_WINDOW=1 -x RSAG_TRACE=1); extra=(--tol 0.19) ;;
    fp16) env=(-x LD_PRELOAD=$L -x APSMPI_FORMAT=fp16 -x RSAG_TRACE=1); extra=(--tol 1.5e-3) ;;
    fp16pm1) env=(-x LD_PRELOAD=$L -x APSMPI_FORMAT=fp16 -x RSAG_PM=1 -x RSAG_WINDOW=1 -x RSAG_TRACE=1); extra=(--tol 1.5e-3) ;;
    ring) env=(-x LD_PRELOAD=$L -x APSMPI_FORMAT=$fmt -x APSMPI_ALGORITHM=ring); extra=(--tol 0.19) ;;
    zero) env=(); extra=(--zero-cost-bits 8) ;;
    zero16) env=(); extra=(--zero-cost-bits 16) ;;
    fp32) env=(); extra=(--tol 1e-5) ;;
  esac
  o=$OUT/tr_n${NP}p${PPN}${RATE}_${cfg}_$round
  timeout 300 scripts/study/link_trace.sh $o --np $NP --ranks-per-node $PPN --rate $RATE --timeout 200 -- $R "${env[@]}" -- $B "${extra[@]}" --label "cfg=$cfg;round=$round" --csv $o.csv
  echo "== $cfg round $round rc=$? time $(tail -1 $o.csv | cut -d, -f4)"
  python3 scripts/study/link_trace.py $o ${TRACE_BPS:-$(( ${RATE%gbit} * 1000000000 ))} | tail -3
done
done
echo "load after: $(cat /proc/loadavg)"
