#!/bin/bash
# device_mlp.sh: how seeds 6-15 of this folder were made on the lent GPU machine's 16 CPU cores: run there from the repository root with .devpack/carry.tar.xz (apsmpi built for MPICH by scripts/test.sh in build-mpich/obj, MPICH, UCX, the libraries ldd names) and .devpack/fmnist.tar (Debian's Fashion-MNIST files) carried; the ranks never oversubscribed; stops starting runs at DEADLINE; outputs into $OUT/runs.tar.gz
set -u
tar -xJf .devpack/carry.tar.xz && tar -xf .devpack/fmnist.tar -C .devcarry
D=$PWD/.devcarry
export D LD_LIBRARY_PATH=$D/lib PATH=$D/bin:$PATH UCX_TLS=self,sm UCX_WARN_UNUSED_ENV_VARS=n HYDRA_LAUNCHER=fork
export DEADLINE=$(( $(date +%s) + ${BUDGET:-300} ))
{ date; nproc; lscpu | grep -E "Model name"; } > $OUT/machine.txt
one() {
    local seed=$1 np=$2 fmt=$3 name dir start envs=()
    [ "$(date +%s)" -lt "$DEADLINE" ] || return 0
    name=$fmt dir=$OUT/runs/seed$seed
    if [ $fmt != fp32 ]; then
        name=$fmt-rsag
        envs=(-env LD_PRELOAD $D/build/.libs/libapsmpi.so -env APSMPI_FORMAT $fmt -env APSMPI_ALGORITHM rsag
              -env APSMPI_SCALING block -env APSMPI_MIN_BYTES 0 -env APSMPI_STATS 1 -env APSMPI_INTRANODE compress)
    fi
    mkdir -p $dir
    start=$(date +%s)
    timeout -k 5 120 mpiexec.hydra -bind-to none -n $np "${envs[@]}" $D/build/apps/apsmpi_train --model mlp \
        --data $D/fashion-mnist --epochs 2 --train-limit 20000 --test-limit 5000 --bucket-bytes 1048576 \
        --seed $seed --label $name --csv $dir/np$np-$name.csv > $dir/np$np-$name.log 2>&1
    echo $? > $dir/np$np-$name.rc
    echo "$(date +%T) np$np-$name seed $seed rc $(cat $dir/np$np-$name.rc) $(( $(date +%s) - start )) s: $(tail -1 $dir/np$np-$name.csv | cut -d, -f6)" >> $OUT/log.txt
}
export -f one
jobs() { # NP: the runs at NP ranks, cross-check of seed 1 first
    for f in fp32 mxfp4; do echo "1 $1 $f"; done
    for s in 6 7 8 9 10 11 12 13 14 15; do for f in fp32 mxfp8 mxfp4; do echo "$s $1 $f"; done; done
}
jobs 4 | xargs -P 4 -L 1 bash -c 'one "$@"' _
jobs 8 | xargs -P 2 -L 1 bash -c 'one "$@"' _
jobs 16 | xargs -P 1 -L 1 bash -c 'one "$@"' _
tar -C $OUT -czf $OUT/runs.tar.gz runs && rm -rf $OUT/runs
echo done; tail -3 $OUT/log.txt; wc -l < $OUT/log.txt
