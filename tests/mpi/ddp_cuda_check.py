# ddp_cuda_check.py: apsmpi_ddp's hook on GPU buckets with the library preloaded (the device path): the same bits as on CPU buckets, within the format's error of the exact mean where DDP's default is within float32 rounding, step by step; the same weights on every rank (tests/mpi/ddp_cuda.sh).
"""Run under mpirun with libapsmpi.so preloaded and APSMPI_FORMAT set, or with the library off and a
CUDA-aware MPI (--tol then float32's rounding) (any rank count; the ranks
may share one GPU). --device cuda (default) or cpu (the same checks on the host path, which is
how the script itself is tested without a GPU).

1. Buckets handed to the hook directly (its function, a stand-in for DDP's GradBucket): each
   rank's data (a different seed per rank, magnitudes over 2^-20..2^4) once as a tensor on
   --device and once as a CPU tensor; the two results must be the same bits (apsmpi's device
   path gives the host path's bits), and within the format's error of the exact (float64) mean.
2. An MLP under DDP, three copies at the same weights each step: DDP's default allreduce (gloo,
   on the device's tensors), the hook, and no DDP (each rank's own gradient, for the exact
   mean). Per step: the default within float32 rounding of the exact mean (relative L2 below
   1e-6), the hook within the format's error (relative L2 below --tol), both printed.
3. Every rank holds the same weights (the hook's model, after the steps); the CUDA plugin
   libapsmpi_cuda.so is loaded in every rank (--device cuda, the library preloaded), i.e.
   apsmpi saw device buffers.

The format's error, relative L2 of the mean: each rank's contribution and the owner's sum are
each rounded once to the format (docs/algorithm.md); --tol is the shell test's bound per format.
Prints 'check ok' and 'FAILED' lines, 'figure' lines; exits 1 on a failure."""

import argparse
import hashlib
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.environ.get("APSMPI_DDP_PATH", ""))
import apsmpi_ddp  # noqa: E402
from mpi4py import MPI  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--device", default="cuda")
ap.add_argument("--tol", type=float, required=True, help="the hook's largest relative L2 error against the exact mean")
ap.add_argument("--steps", type=int, default=3)
args = ap.parse_args()

comm = MPI.COMM_WORLD
rank, size = apsmpi_ddp.init_process_group("gloo")
torch.set_num_threads(1)
device = torch.device(args.device)
failures = 0


def check(ok, what):
    global failures
    ok = all(comm.allgather(bool(ok)))  # every rank's verdict
    if not ok:
        failures += 1
        if rank == 0:
            print("FAILED: %s" % what)
    elif rank == 0:
        print("check ok: %s" % what)
    sys.stdout.flush()


def figure(text):
    if rank == 0:
        print("figure: %s" % text)
        sys.stdout.flush()


def exact_mean(local):
    """The ranks' mean of a tensor, summed in float64 (gloo, on the CPU)."""
    s = local.detach().double().cpu()
    dist.all_reduce(s)
    return s / size


def rel_l2(got, want):
    got = got.detach().double().cpu()
    return float((got - want).norm() / want.norm().clamp_min(1e-300))


def bits(t):
    return t.detach().cpu().contiguous().view(torch.int32)


class Bucket:
    """What the hook uses of DDP's GradBucket: its flat buffer and its index."""

    def __init__(self, buf, index):
        self._buf, self._index = buf, index

    def buffer(self):
        return self._buf

    def index(self):
        return self._index


# ---- 1. buckets straight into the hook: the device's bits against the host's ----
state = apsmpi_ddp.HookState()
gen = torch.Generator().manual_seed(1000 + rank)
for n in (300000, 1 << 21):
    x = torch.randn(n, generator=gen) * torch.exp2(torch.randint(-20, 5, (n,), generator=gen).float())
    on_dev, on_cpu = x.clone().to(device), x.clone()
    want = exact_mean(x)
    r_dev = apsmpi_ddp.mpi_allreduce_hook(state, Bucket(on_dev, 0)).wait()
    r_cpu = apsmpi_ddp.mpi_allreduce_hook(state, Bucket(on_cpu, 1)).wait()
    if device.type == "cuda":
        torch.cuda.synchronize()
    check(r_dev.device == on_dev.device and r_dev.data_ptr() == on_dev.data_ptr(),
          "%d floats: the hook's result is the bucket itself, on %s" % (n, device))
    same = bool(torch.equal(bits(r_dev), bits(r_cpu)))
    check(same, "%d floats: the bucket on %s gives the CPU bucket's bits" % (n, device))
    err = rel_l2(r_dev, want)
    figure("%d floats on %s: relative L2 error against the exact mean %.3g" % (n, device, err))
    check(err <= args.tol, "%d floats: within the format's error of the exact mean (%.3g <= %g)" % (n, err, args.tol))
hook_calls = 4


# ---- 2. DDP, step by step ----
def mlp():
    return nn.Sequential(nn.Linear(784, 700), nn.ReLU(), nn.Linear(700, 400), nn.ReLU(), nn.Linear(400, 10))


torch.manual_seed(7)
base = mlp()
copies = []
for _ in range(3):  # default, hook, local (no DDP: each rank's own gradient)
    m = mlp()
    m.load_state_dict(base.state_dict())
    copies.append(m.to(device))
ids = [device] if device.type == "cuda" else None
default = DDP(copies[0], bucket_cap_mb=0.25, device_ids=ids)
hooked = DDP(copies[1], bucket_cap_mb=0.25, device_ids=ids)
hstate = apsmpi_ddp.register(hooked)
local = copies[2]
opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (default, hooked)]
worst_d = worst_h = 0.0
for step in range(args.steps):
    x = torch.randn(32, 784, generator=gen).to(device)
    y = torch.randint(0, 10, (32,), generator=gen).to(device)
    for m in (default, hooked, local):
        for p in m.parameters():
            p.grad = None
        F.cross_entropy(m(x), y).backward()
    want = exact_mean(torch.cat([p.grad.flatten() for p in local.parameters()]))
    got_d = torch.cat([p.grad.flatten() for p in default.parameters()])
    got_h = torch.cat([p.grad.flatten() for p in hooked.parameters()])
    ed, eh = rel_l2(got_d, want), rel_l2(got_h, want)
    worst_d, worst_h = max(worst_d, ed), max(worst_h, eh)
    figure("step %d: relative L2 error of DDP's default %.3g, of the hook %.3g" % (step, ed, eh))
    check(got_h.device.type == device.type, "np=%d step %d: the hook's gradients are on %s" % (size, step, device))
    check(ed <= 1e-6, "np=%d step %d: DDP's default allreduce within float32 rounding of the exact mean" % (size, step))
    check(eh <= args.tol, "np=%d step %d: the hook within the format's error of the exact mean (%.3g <= %g)"
          % (size, step, eh, args.tol))
    for o in opts:
        o.step()
    local.load_state_dict(copies[1].state_dict())  # the next step's gradients at the hook's weights
    copies[0].load_state_dict(copies[1].state_dict())
c = hstate.stats()
nbytes = 4 * sum(p.numel() for p in base.parameters())
check(c["bytes"] == args.steps * nbytes and c["upcast"] == 0 and c["fallback"] == 0,
      "every gradient through MPI once a step (%s)" % c)
hook_calls += c["buckets"]

# ---- 3. the same weights everywhere; the device path was taken ----
flat = torch.cat([p.detach().double().cpu().flatten() for p in copies[1].parameters()])
digests = comm.allgather(hashlib.sha256(flat.numpy().tobytes()).hexdigest()[:16])
check(len(set(digests)) == 1, "np=%d: the hook's model has the same weights on every rank (%s)" % (size, digests[0]))
if device.type == "cuda" and "libapsmpi" in os.environ.get("LD_PRELOAD", ""):
    with open("/proc/self/maps") as f:
        plugin = "libapsmpi_cuda.so" in f.read()
    check(plugin, "the CUDA plugin libapsmpi_cuda.so is loaded in every rank (apsmpi took the device path)")
if rank == 0:
    print("hook calls %d a rank" % hook_calls)  # the shell test compares the statistics line with it
state.close()
hstate.close()
comm.Barrier()
sys.exit(1 if failures else 0)
