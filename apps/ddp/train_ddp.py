# train_ddp.py: a PyTorch DDP training job (an MLP on Fashion-MNIST, gloo process group, on the CPU or a GPU) started by mpirun, with DDP's default allreduce or with apsmpi_ddp's MPI hook (--hook mpi).
"""Usage (the module found by path; `make install` puts apsmpi_ddp.py where python3 finds it):

    mpirun -np 4 /usr/bin/python3 apps/ddp/train_ddp.py --hook mpi
    mpirun -np 4 -x LD_PRELOAD=$PWD/.libs/libapsmpi.so -x APSMPI_FORMAT=e4m3 -x APSMPI_STATS=1 \
        /usr/bin/python3 apps/ddp/train_ddp.py --hook mpi

Every rank trains on its share of each batch (the same shuffle on every rank); rank 0 tests the
model after each epoch. Prints per epoch: its time (slowest rank, between barriers), the mean
training loss and the test accuracy; at the end the hook's counts and whether every rank holds
the same weights (a checksum of their bytes).
"""

import argparse
import gzip
import hashlib
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "wrappers", "python"))
import apsmpi_ddp  # noqa: E402  (by path from the source tree, else where make install put it)
from mpi4py import MPI  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, n = struct.unpack(">II", data[:8])
    if magic == 2049:
        return np.frombuffer(data, dtype=np.uint8, offset=8).astype(np.int64)
    rows, cols = struct.unpack(">II", data[8:16])
    return np.frombuffer(data, dtype=np.uint8, offset=16).reshape(n, rows * cols).astype(np.float32) / 255.0


def load(data_dir, prefix, n):
    x = read_idx(os.path.join(data_dir, prefix + "-images-idx3-ubyte.gz"))[:n]
    y = read_idx(os.path.join(data_dir, prefix + "-labels-idx1-ubyte.gz"))[:n]
    x = (x - 0.2860) / 0.3530  # Fashion-MNIST's mean and standard deviation
    return torch.from_numpy(x.copy()), torch.from_numpy(y.copy())


class MLP(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        sizes = [784] + hidden + [10]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = F.relu(layer(x))
        return self.layers[-1](x)


def weights_digest(model):
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().cpu().numpy().tobytes())
    return h.hexdigest()[:16]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hook", choices=["none", "mpi"], default="mpi",
                    help="none: DDP's default allreduce (gloo); mpi: apsmpi_ddp's MPI_Iallreduce hook")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--train", type=int, default=12000, help="training images (the first N)")
    ap.add_argument("--test", type=int, default=5000, help="test images (the first N)")
    ap.add_argument("--batch", type=int, default=128, help="global batch (divided among the ranks)")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--hidden", default="512,256", help="hidden layer widths")
    ap.add_argument("--bucket-cap-mb", type=float, default=25.0, help="DDP's bucket_cap_mb")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads on each rank")
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--device", default="cpu",
                    help="cpu, or cuda (cuda:N): the model, the data and DDP's buckets on that GPU (ranks may share one)")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    rank, size = apsmpi_ddp.init_process_group("gloo")
    comm = MPI.COMM_WORLD
    if args.batch % size:
        sys.exit("train_ddp: --batch %d is not a multiple of the %d ranks" % (args.batch, size))
    local_batch = args.batch // size
    device = torch.device(args.device)
    xtr, ytr = (t.to(device) for t in load(args.data, "train", args.train))
    xte, yte = (t.to(device) for t in load(args.data, "t10k", args.test))

    torch.manual_seed(args.seed)  # the same initial weights on every rank (DDP broadcasts rank 0's anyway)
    model = MLP([int(h) for h in args.hidden.split(",") if h]).to(device)
    ddp = DDP(model, bucket_cap_mb=args.bucket_cap_mb, device_ids=[device] if device.type == "cuda" else None)
    state = apsmpi_ddp.register(ddp) if args.hook == "mpi" else None
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=args.momentum)
    gen = torch.Generator().manual_seed(args.seed)
    steps = len(xtr) // args.batch
    if rank == 0:
        nparams = sum(p.numel() for p in model.parameters())
        print("ranks %d hook %s params %d steps/epoch %d local batch %d device %s" % (size, args.hook, nparams, steps,
                                                                                    local_batch, device))
        sys.stdout.flush()

    for epoch in range(1, args.epochs + 1):
        perm = torch.randperm(len(xtr), generator=gen).to(device)  # the same on every rank
        comm.Barrier()
        t0 = time.perf_counter()
        total = 0.0
        for s in range(steps):
            idx = perm[s * args.batch + rank * local_batch:s * args.batch + (rank + 1) * local_batch]
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(ddp(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
            total += loss.item()
        elapsed = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)  # (a Python float: pickled, not MPI_FLOAT)
        mean_loss = comm.allreduce(total / steps) / size
        if rank == 0:
            with torch.no_grad():
                acc = (model(xte).argmax(1) == yte).float().mean().item() * 100
            print("epoch %d time %.3f s loss %.4f accuracy %.2f" % (epoch, elapsed, mean_loss, acc))
            sys.stdout.flush()
        comm.Barrier()

    digests = comm.allgather(weights_digest(model))
    if rank == 0:
        if state is not None:
            c = state.stats()
            print("hook buckets %d bytes %d upcast %d fallback %d" % (c["buckets"], c["bytes"], c["upcast"], c["fallback"]))
        print("same weights on every rank %s" % (len(set(digests)) == 1))
        print("weights %s" % digests[0])
    if state is not None:
        state.close()


if __name__ == "__main__":
    main()
