#!/bin/bash
# device_gpt.sh: how the transformer's MX runs of seeds 2-5 (and error feedback) were made on the lent GPU machine's 16 CPU cores: run there from the repository root with .devpack/carry.tar.xz (an MPICH build of apsmpi, MPICH, UCX and the fortunes, built by scripts/test.sh in build-mpich/obj, with the libraries ldd names) carried; 8 ranks, 2 runs at a time; outputs into $OUT/runs.tar.gz
set -u
tar -xJf .devpack/carry.tar.xz
D=$PWD/.devcarry
export D LD_LIBRARY_PATH=$D/lib PATH=$D/bin:$PATH UCX_TLS=self,sm UCX_WARN_UNUSED_ENV_VARS=n HYDRA_LAUNCHER=fork
{ date; nproc; lscpu | grep -E "Model name|Thread|Socket"; uptime; } > $OUT/machine.txt
one() {
    local seed=$1 fmt=$2 tag=$3 name dir start envs=()
    shift 3
    name=np8-$fmt${tag:+-$tag}-fused dir=$OUT/runs/seed$seed
    mkdir -p $dir
    if [ $fmt != fp32 ]; then
        envs=(-env LD_PRELOAD $D/build/.libs/libapsmpi.so -env APSMPI_FORMAT $fmt -env APSMPI_SCALING block
              -env APSMPI_MIN_BYTES 0 -env APSMPI_STATS 1 -env APSMPI_INTRANODE compress)
        [ -n "$tag" ] && envs+=(-env APSMPI_ERROR_FEEDBACK 1)
    fi
    start=$(date +%s)
    timeout -k 5 420 mpiexec.hydra -bind-to none -n 8 "${envs[@]}" $D/build/apps/apsmpi_train --model gpt \
        --data $D/fortunes --seed $seed --steps ${STEPS:-400} --eval-every ${EVAL:-50} --bucket-bytes all --label $fmt${tag:+-$tag} --csv $dir/$name.csv \
        > $dir/$name.out 2>&1
    echo $? > $dir/$name.rc
    echo "$(date +%T) $name seed $seed rc $(cat $dir/$name.rc) $(( $(date +%s) - start )) s: $(grep 'eval 8/8' $dir/$name.out)" | tee -a $OUT/log.txt
}
export -f one
[ -n "${JOBS_FILE:-}" ] && cp $JOBS_FILE $OUT/jobs.txt || cat > $OUT/jobs.txt <<'JOBS'
1 fp32 -
1 mxfp4 -
2 fp32 -
2 mxfp4 -
3 fp32 -
3 mxfp4 -
4 fp32 -
4 mxfp4 -
5 fp32 -
5 mxfp4 -
2 mxfp8 -
3 mxfp8 -
4 mxfp8 -
5 mxfp8 -
1 mxfp8 -
1 mxfp4 ef
2 mxfp4 ef
3 mxfp4 ef
4 mxfp4 ef
5 mxfp4 ef
1 mxfp6 -
2 mxfp6 -
3 mxfp6 -
4 mxfp6 -
5 mxfp6 -
JOBS
sed 's/ -$/ ""/' $OUT/jobs.txt | xargs -P 2 -L 1 bash -c 'one "$@"' _
echo all done
tar -C $OUT -czf $OUT/runs.tar.gz runs && rm -rf $OUT/runs
