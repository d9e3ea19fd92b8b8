# ddp_check.py: apsmpi_ddp's hook against DDP's default allreduce and an exact (float64) mean, step by step; its float16 and float64 buckets; identical weights on every rank; the one-line refusals (tests/mpi/ddp_hook.sh).
"""Run under mpirun (any rank count). Per step, the same batch goes through two copies of one
model, one with DDP's default allreduce (gloo), one with the hook; each reduced gradient is
checked against the mean of the ranks' local gradients summed in float64: both within the
recursive-summation bound of float32, ((N-1) u sum_r |g_r| + u |sum_r g_r|) / N with u = 2^-24
(any order of the sum, the division by N included), and within twice that of each other. A
second model has one float64 and one float16 parameter besides its float32 ones: the hook
sends the float16 bucket as float32 (rounded back once: within 2^-11 relative (2^-25 absolute below the normal range) of the exact mean
plus the float32 bound) and leaves the float64 one to the process group. Prints 'check ok' lines
and 'FAILED' lines; exits 1 on a failure."""

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

U32 = 2.0 ** -24
failures = 0


def check(ok, what):
    global failures
    if not ok:
        failures += 1
        print("FAILED: rank %d: %s" % (rank, what))
    elif rank == 0:
        print("check ok: %s" % what)
    sys.stdout.flush()


def exact_mean_and_bound(local_grads, u):
    """The ranks' mean of each local gradient in float64 and the bound of a float sum of it."""
    out = []
    for g in local_grads:
        g64 = g.double()
        s = g64.clone()
        a = g64.abs()
        dist.all_reduce(s)  # gloo, float64
        dist.all_reduce(a)
        bound = ((size - 1) * u * a + u * s.abs()) / size
        out.append((s / size, bound))
    return out


class Mixed(nn.Module):
    """float32 layers, and one float64 and one float16 parameter (buckets of their own)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 300)
        self.fc2 = nn.Linear(300, 10)
        self.w64 = nn.Parameter(torch.randn(40000, dtype=torch.float64) * 0.01)
        self.w16 = nn.Parameter((torch.randn(30000) * 0.01).to(torch.float16))

    def forward(self, x):
        h = F.relu(self.fc1(x))
        extra = (self.w64[: h.numel()].view_as(h).float() * h).sum() * 1e-3
        extra = extra + (self.w16[: h.numel()].view_as(h).float() * h).sum() * 1e-3
        return self.fc2(h) + extra


comm = MPI.COMM_WORLD
rank, size = apsmpi_ddp.init_process_group("gloo")
torch.set_num_threads(1)
steps = 3

# ---- a float32 MLP: default allreduce against the hook ----
# (one bucket at the first step; after it DDP rebuilds them, and its first bucket closes at 1 MiB or
# more: the last two layers, 1.1 MB; the first layer is the second bucket)


def mlp():
    return nn.Sequential(nn.Linear(784, 700), nn.ReLU(), nn.Linear(700, 400), nn.ReLU(), nn.Linear(400, 10))


torch.manual_seed(7)
base = mlp()
copies = []
for _ in range(3):  # default, hook, local (no DDP: each rank's own gradient)
    m = mlp()
    m.load_state_dict(base.state_dict())
    copies.append(m)
default = DDP(copies[0], bucket_cap_mb=0.25)
hooked = DDP(copies[1], bucket_cap_mb=0.25)
state = apsmpi_ddp.register(hooked)
local = copies[2]
opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (default, hooked)]
gen = torch.Generator().manual_seed(100 + rank)  # each rank its own data
worst = 0.0
for step in range(steps):
    x = torch.randn(32, 784, generator=gen)
    y = torch.randint(0, 10, (32,), generator=gen)
    for m in (default, hooked, local):
        for p in m.parameters():
            p.grad = None
        F.cross_entropy(m(x), y).backward()
    ref = exact_mean_and_bound([p.grad for p in local.parameters()], U32)
    ok_d = ok_h = ok_dh = True
    for pd, ph, (mean, bound) in zip(default.parameters(), hooked.parameters(), ref):
        ed = (pd.grad.double() - mean).abs()
        eh = (ph.grad.double() - mean).abs()
        ok_d &= bool((ed <= bound).all())
        ok_h &= bool((eh <= bound).all())
        ok_dh &= bool(((pd.grad.double() - ph.grad.double()).abs() <= 2 * bound).all())
        worst = max(worst, float(((pd.grad.double() - ph.grad.double()).abs() / bound.clamp_min(1e-300)).max()))
    check(ok_d, "np=%d step %d: DDP's default allreduce within float32 rounding of the exact mean" % (size, step))
    check(ok_h, "np=%d step %d: the hook within float32 rounding of the exact mean" % (size, step))
    check(ok_dh, "np=%d step %d: the hook within float32 rounding of DDP's default" % (size, step))
    for o in opts:
        o.step()
    local.load_state_dict(copies[1].state_dict())  # the next step's local gradients at the hook's weights
    copies[0].load_state_dict(copies[1].state_dict())
c = state.stats()
nbytes = 4 * sum(p.numel() for p in base.parameters())
check(c["bytes"] == steps * nbytes and c["buckets"] >= 2 * steps - 1 and c["upcast"] == 0 and c["fallback"] == 0,
      "the float32 model: every gradient through MPI once a step, in 2 buckets after the first step (%s)" % c)
if rank == 0:
    print("worst |hook - default| / bound %.3g" % worst)

# ---- find_unused_parameters=True: a layer that only rank 0 uses at odd steps ----


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(784, 300)
        self.b = nn.Linear(300, 10)
        self.extra = nn.Linear(300, 10)

    def forward(self, x, use_extra):
        h = F.relu(self.a(x))
        return self.b(h) + (self.extra(h) if use_extra else 0)


torch.manual_seed(9)
branchy = [Branchy() for _ in range(3)]
for m in branchy[1:]:
    m.load_state_dict(branchy[0].state_dict())
bdefault = DDP(branchy[0], find_unused_parameters=True)
bhooked = DDP(branchy[1], find_unused_parameters=True)
bstate = apsmpi_ddp.register(bhooked)
for step in range(2):
    x = torch.randn(16, 784, generator=gen)
    y = torch.randint(0, 10, (16,), generator=gen)
    use = rank == 0 and step == 1
    for m in (bdefault, bhooked, branchy[2]):
        for p in m.parameters():
            p.grad = None
        F.cross_entropy(m(x, use), y).backward()
    ok = True
    for pd, ph, pl in zip(bdefault.parameters(), bhooked.parameters(), branchy[2].parameters()):
        (mean, bound), = exact_mean_and_bound([pl.grad if pl.grad is not None else torch.zeros_like(pl)], U32)
        for p in (pd, ph):
            g = p.grad if p.grad is not None else torch.zeros_like(p)
            ok &= bool(((g.double() - mean).abs() <= bound).all())
    check(ok, "np=%d step %d, find_unused_parameters=True (the extra layer used on rank 0: %s): default and hook "
          "within float32 rounding of the exact mean" % (size, step, step == 1))

# ---- float64 and float16 parameters ----
torch.manual_seed(8)
mixed = Mixed()
mlocal = Mixed()
mlocal.load_state_dict(mixed.state_dict())
mddp = DDP(mixed, bucket_cap_mb=25)
mstate = apsmpi_ddp.register(mddp)
for step in range(2):
    x = torch.randn(8, 64, generator=gen)
    y = torch.randint(0, 10, (8,), generator=gen)
    for m in (mddp, mlocal):
        for p in m.parameters():
            p.grad = None
        F.cross_entropy(m(x), y).backward()
    for (name, ph), pl in zip(mixed.named_parameters(), mlocal.parameters()):
        (mean, bound), = exact_mean_and_bound([pl.grad], U32 if pl.dtype != torch.float64 else 2.0 ** -53)
        if ph.dtype == torch.float16:  # rounded back once: half a unit in the last place (2^-25 below the normal range)
            bound = bound + torch.maximum(2.0 ** -11 * mean.abs(), torch.full_like(mean, 2.0 ** -25))
        err = (ph.grad.double() - mean).abs()
        check(bool((err <= 2 * bound).all()) and ph.grad.dtype == pl.dtype,
              "np=%d step %d: %s (%s) within its rounding of the exact mean" % (size, step, name, ph.dtype))
    for p in mixed.parameters():  # a step, so that the weights checked below moved
        p.data.add_(p.grad, alpha=-0.1)
    mlocal.load_state_dict(mixed.state_dict())
c = mstate.stats()
nbytes = 4 * sum(p.numel() for p in mixed.parameters() if p.dtype != torch.float64)
check(c["upcast"] == 2 and c["fallback"] == 2 and c["buckets"] == 4 and c["bytes"] == 2 * nbytes,
      "the mixed model: per step one float32 bucket, one float16 bucket through MPI as float32, "
      "one float64 bucket through the process group (%s)" % c)

# ---- every rank holds the same weights ----
for name, m in (("default", copies[0]), ("hook", copies[1]), ("mixed", mixed)):
    flat = torch.cat([p.detach().double().flatten() for p in m.parameters()])
    digests = comm.allgather(hashlib.sha256(flat.numpy().tobytes()).hexdigest())
    check(len(set(digests)) == 1, "np=%d: the %s model's weights are the same on every rank" % (size, name))

# ---- what the hook cannot do: one line ----
emb = nn.Sequential(nn.EmbeddingBag(100, 8, sparse=True), nn.Linear(8, 2))
try:
    apsmpi_ddp.register(DDP(emb))
    check(False, "sparse gradients refused")
except apsmpi_ddp.HookError as e:
    msg = str(e)
    check("\n" not in msg and "sparse" in msg, "sparse gradients refused in one line: %s" % msg)

state.close()
mstate.close()
bstate.close()
comm.Barrier()
sys.exit(1 if failures else 0)
