# iallreduce.py: an mpi4py job (it knows nothing of apsmpi) that sums float32 arrays with Iallreduce, two outstanding, waited for in reverse order, and prints a checksum of the results and their largest error against the exact sum.
import struct
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000


def values(r, k):
    # exact in float32: multiples of 1/64 below 4 in magnitude
    return [((i * 7 + r * 13 + k * 5) % 509 - 254) / 64.0 for i in range(n)]


def f32(xs):
    return bytearray(struct.pack("%df" % len(xs), *xs))


sends = [f32(values(rank, k)) for k in range(2)]
recvs = [bytearray(4 * n) for _ in range(2)]
reqs = [comm.Iallreduce([sends[k], MPI.FLOAT], [recvs[k], MPI.FLOAT], op=MPI.SUM) for k in range(2)]
for req in reversed(reqs):
    req.Wait()
worst = 0.0
for k in range(2):
    got = struct.unpack("%df" % n, recvs[k])
    exact = [sum(v) for v in zip(*(values(r, k) for r in range(size)))]
    worst = max(worst, max(abs(g - e) / (size * 4.0) for g, e in zip(got, exact)))
h = 0
for k in range(2):
    for b in recvs[k]:
        h = (h * 31 + b) & 0xFFFFFFFFFFFFFFFF
hs = comm.allgather(h)
if rank == 0:
    print("worst %.6g" % worst)
    print("same on every rank %s" % (len(set(hs)) == 1))
    print("checksum %016x" % h)
