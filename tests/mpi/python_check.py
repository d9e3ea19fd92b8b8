# python_check.py: an mpi4py 4 or an mpi4jax job (it knows nothing of apsmpi) for scripts/ci/mpi_matrix.sh: float32 sums checked against the exact sum, and the calls it expects compressed.
# usage: mpirun -np N python python_check.py mpi4py|mpi4jax
# Sums two float32 arrays a call: small integers (exact in fp16 and bf16: compared bit for bit
# when APSMPI_FORMAT is one of them) and values in [-1, 1) (within the format's bound: each
# value rounded at most twice to a format of P significand bits, relative to its block's
# largest: |error| <= (N + 1) * 2^-P * max_i sum_r |x_r,i|), and one int32 sum (passed
# through). mpi4py: Allreduce, Iallreduce and Allreduce on numpy arrays. mpi4jax:
# mpi4jax.allreduce on jax arrays, eager and inside jax.jit (its C++ extension calls
# MPI_Allreduce). Rank 0 prints "python_check MODE: ok: expect compressed C passed P" (C, P:
# summed over the ranks, as the statistics line counts them) or "python_check MODE: FAILED: ...".
import os
import sys

import numpy as np

mode = sys.argv[1] if len(sys.argv) > 1 else "mpi4py"
if mode == "mpi4jax":
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    import mpi4jax
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
n = 65536
SIGNIFICAND = {"fp16": 11, "bf16": 8, "e4m3": 4, "e5m2": 3}
fmt = os.environ.get("APSMPI_FORMAT", "e4m3")
exact_ints = fmt in ("fp16", "bf16")


def ints(r, k):
    return (((np.arange(n) * 7 + r * 13 + k * 5) % 41) - 20).astype(np.float32)


def floats(r, k):
    return np.random.default_rng(1000 * k + r).uniform(-1, 1, n).astype(np.float32)


failures = []


def check(what, got, gen, k):
    got = np.asarray(got, dtype=np.float64)
    parts = [gen(r, k).astype(np.float64) for r in range(size)]
    exact = np.sum(parts, axis=0)
    err = np.abs(got - exact)
    if gen is ints and exact_ints:
        bound = 0.0
    else:
        bound = (size + 1) * 2.0 ** -SIGNIFICAND.get(fmt, 3) * np.max(np.sum(np.abs(parts), axis=0))
    if not np.all(err <= bound):
        failures.append("%s: largest error %g above %g (format %s)" % (what, err.max(), bound, fmt))


compressed = passed = 0
if mode == "mpi4py":
    for k, gen in enumerate((ints, floats)):
        recv = np.empty(n, np.float32)
        comm.Allreduce(gen(rank, k), recv, op=MPI.SUM)
        check("Allreduce %s" % gen.__name__, recv, gen, k)
        # the send buffer kept until the wait, as MPI requires (mpi4py 4.1.2's Iallreduce holds no
        # reference to it: a temporary is freed when the call returns, which apsmpi, reading it
        # after the start, shows as wrong sums)
        send, recv2 = gen(rank, k + 2), np.empty(n, np.float32)
        comm.Iallreduce(send, recv2, op=MPI.SUM).Wait()
        check("Iallreduce %s" % gen.__name__, recv2, gen, k + 2)
        compressed += 2
    irecv = np.empty(n, np.int32)
    comm.Allreduce(np.full(n, rank + 1, np.int32), irecv, op=MPI.SUM)
    if not np.all(irecv == size * (size + 1) // 2):
        failures.append("int32 Allreduce wrong")
    passed += 1
elif mode == "mpi4jax":
    summed = jax.jit(lambda x: mpi4jax.allreduce(x, op=MPI.SUM, comm=comm))
    for k, gen in enumerate((ints, floats)):
        got = mpi4jax.allreduce(jnp.asarray(gen(rank, k)), op=MPI.SUM, comm=comm)
        check("mpi4jax.allreduce %s" % gen.__name__, got, gen, k)
        got = summed(jnp.asarray(gen(rank, k + 2)))
        check("jit(mpi4jax.allreduce) %s" % gen.__name__, got, gen, k + 2)
        compressed += 2
    got = mpi4jax.allreduce(jnp.full(n, rank + 1, jnp.int32), op=MPI.SUM, comm=comm)
    if not np.all(np.asarray(got) == size * (size + 1) // 2):
        failures.append("int32 mpi4jax.allreduce wrong")
    passed += 1
else:
    sys.exit("usage: python_check.py mpi4py|mpi4jax")

for f in failures:
    print("python_check %s rank %d: %s" % (mode, rank, f), file=sys.stderr, flush=True)
bad = np.empty(1, np.int32)
comm.Allreduce(np.array([len(failures)], np.int32), bad, op=MPI.SUM)  # an int sum: passed through
bad, passed = int(bad[0]), passed + 1
if rank == 0:
    print("python_check %s: MPI library: %s" % (mode, MPI.Get_library_version().splitlines()[0][:60].strip()), flush=True)
    if bad:
        print("python_check %s: FAILED: %d wrong result(s) (stderr names them)" % (mode, bad), flush=True)
    else:
        print("python_check %s: ok: expect compressed %d passed %d" % (mode, compressed * size, passed * size), flush=True)
sys.exit(1 if bad else 0)
