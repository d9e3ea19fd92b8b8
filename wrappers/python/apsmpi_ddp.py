# apsmpi_ddp.py: a PyTorch DistributedDataParallel communication hook that sums each gradient bucket with MPI_Iallreduce through mpi4py, so that libapsmpi.so, preloaded, compresses DDP's gradients.
"""PyTorch DDP gradients through MPI (and so through apsmpi when it is preloaded).

The one line, after the model is wrapped::

    import apsmpi_ddp
    model = DistributedDataParallel(model)   # gloo (CPU) or NCCL process group, as before
    apsmpi_ddp.register(model)                # every gradient bucket: MPI_Iallreduce

Each bucket DDP hands to the hook (its flat buffer) is divided by the world size and summed in
place with ``MPI_Iallreduce(MPI_IN_PLACE, ..., MPI_FLOAT, MPI_SUM)`` on a duplicate of
``MPI_COMM_WORLD`` named ``apsmpi_ddp`` (so ``APSMPI_COMM_INCLUDE=apsmpi_ddp`` selects it). The hook
returns at once; one waiter thread per registration tests the outstanding requests
(``MPI_Testsome``) every ``poll_interval_s`` seconds, which also advances plain MPI's
non-blocking collectives, and completes DDP's future when its request completes. DDP's process
group stays in charge of everything else (parameter broadcast at construction, buffers, the
job's own collectives). docs/pytorch.md says what the hook changes and what it cannot do.

Requirements: MPI initialised at ``MPI_THREAD_MULTIPLE`` (mpi4py's default), since the waiter
thread calls MPI while the autograd thread starts new requests; every rank of the communicator is
one rank of DDP's process group (the same size).

Buckets by dtype: float32 goes to MPI as it is; float16 and bfloat16 are copied to float32,
summed by MPI, and rounded back once; any other dtype (float64) is summed by DDP's process group
as DDP would without a hook (counted as ``fallback``). Sparse gradients are refused at
``register`` (and by the hook) with one line.

CUDA buckets are handed to MPI as device buffers (mpi4py takes the tensor through DLPack / the
CUDA array interface) after the autograd stream is synchronised; apsmpi's device path compresses
them (its start runs a GPU request to its end, so there is no overlap on that path), and without
apsmpi the MPI itself must accept device buffers (CUDA-aware). Run on an H200 with apsmpi's
device path (docs/pytorch.md; tests/mpi/ddp_cuda.sh).
"""

import threading
import time

import torch
import torch.distributed as dist

try:
    from mpi4py import MPI
except ImportError as e:  # pragma: no cover - said in one line
    raise ImportError("apsmpi_ddp: needs mpi4py (Debian: python3-mpi4py): %s" % e) from None

__all__ = ["register", "init_process_group", "HookState", "HookError", "mpi_allreduce_hook"]

_UPCAST = (torch.float16, torch.bfloat16)


class HookError(RuntimeError):
    """What the hook cannot do, said in one line."""


class _Pending:
    __slots__ = ("req", "fut", "work", "bucket_buf")

    def __init__(self, req, fut, work, bucket_buf):
        self.req = req  # the MPI request
        self.fut = fut  # DDP's future
        self.work = work  # the float32 tensor MPI sums (kept alive until the request completes)
        self.bucket_buf = bucket_buf  # the bucket's own buffer, when work is an upcast copy


class HookState:
    """The hook's state: its communicator, the waiter thread and its counts.

    Counts (``stats()``): ``buckets``: buckets summed by MPI; ``bytes``: their float32 bytes;
    ``upcast``: those among them copied from float16/bfloat16; ``fallback``: buckets summed by
    DDP's process group (dtypes other than float32/float16/bfloat16).
    """

    def __init__(self, process_group=None, comm=None, poll_interval_s=100e-6):
        if not MPI.Is_initialized() or MPI.Is_finalized():
            raise HookError("apsmpi_ddp: MPI is not initialised (import mpi4py.MPI with mpi4py.rc.initialize left True)")
        level = MPI.Query_thread()
        if level < MPI.THREAD_MULTIPLE:
            names = {MPI.THREAD_SINGLE: "SINGLE", MPI.THREAD_FUNNELED: "FUNNELED", MPI.THREAD_SERIALIZED: "SERIALIZED"}
            raise HookError(
                "apsmpi_ddp: MPI runs at MPI_THREAD_%s; the hook needs MPI_THREAD_MULTIPLE "
                "(mpi4py's default: leave mpi4py.rc.thread_level at 'multiple')" % names.get(level, str(level))
            )
        base = comm if comm is not None else MPI.COMM_WORLD
        self.comm = base.Dup()
        self.comm.Set_name("apsmpi_ddp")
        self.world_size = self.comm.Get_size()
        self.process_group = process_group
        pg_size = dist.get_world_size(process_group) if dist.is_initialized() else self.world_size
        if pg_size != self.world_size:
            raise HookError(
                "apsmpi_ddp: DDP's process group has %d ranks and the MPI communicator %d; "
                "they must be the same ranks" % (pg_size, self.world_size)
            )
        self.poll_interval_s = poll_interval_s
        self.counts = {"buckets": 0, "bytes": 0, "upcast": 0, "fallback": 0}
        self._cv = threading.Condition()
        self._pending = []
        self._stop = False
        self._thread = None

    # ---- the waiter ----
    def _start(self, pending):
        with self._cv:
            self._pending.append(pending)
            if self._thread is None:
                self._thread = threading.Thread(target=self._wait_loop, name="apsmpi_ddp waiter", daemon=True)
                self._thread.start()
            self._cv.notify()

    def _wait_loop(self):
        while True:
            with self._cv:
                while not self._pending and not self._stop:
                    self._cv.wait()
                if not self._pending:
                    return
                batch = list(self._pending)
            try:
                done = MPI.Request.Testsome([p.req for p in batch]) or []
            except Exception as e:  # an MPI error: every pending future gets it
                with self._cv:
                    failed, self._pending = self._pending, []
                for p in failed:
                    p.fut.set_exception(HookError("apsmpi_ddp: MPI_Iallreduce failed: %s" % e))
                continue
            if done:
                finished = [batch[i] for i in done]
                with self._cv:
                    self._pending = [p for p in self._pending if p not in finished]
                for p in finished:
                    if p.bucket_buf is not None:  # float16/bfloat16: rounded back once
                        p.bucket_buf.copy_(p.work)
                        p.fut.set_result(p.bucket_buf)
                    else:
                        p.fut.set_result(p.work)
            if len(done) < len(batch):
                time.sleep(self.poll_interval_s)

    def close(self):
        """Stops the waiter thread (after the outstanding requests complete)."""
        with self._cv:
            self._stop = True
            self._cv.notify()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def stats(self):
        return dict(self.counts)


def _fallback(state, buf):
    """DDP's own sum of a bucket, through its process group (as DDP does without a hook)."""
    state.counts["fallback"] += 1
    buf.div_(state.world_size)
    work = dist.all_reduce(buf, group=state.process_group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def mpi_allreduce_hook(state, bucket):
    """DDP communication hook: the bucket's mean over the ranks, summed by MPI_Iallreduce."""
    buf = bucket.buffer()
    if buf.is_sparse or buf.layout != torch.strided:
        raise HookError("apsmpi_ddp: bucket %d holds sparse gradients, which the hook cannot sum" % bucket.index())
    if buf.dtype == torch.float32:
        work, bucket_buf = buf, None
    elif buf.dtype in _UPCAST:
        work, bucket_buf = buf.to(torch.float32), buf
        state.counts["upcast"] += 1
    else:
        return _fallback(state, buf)
    work.div_(state.world_size)
    if work.is_cuda:
        # the bucket was filled on the autograd thread's stream: finished before MPI reads it
        torch.cuda.current_stream(work.device).synchronize()
        fut = torch.futures.Future(devices=[work.device])
    else:
        fut = torch.futures.Future()
    req = state.comm.Iallreduce(MPI.IN_PLACE, [work, MPI.FLOAT], op=MPI.SUM)
    state.counts["buckets"] += 1
    state.counts["bytes"] += work.numel() * 4
    state._start(_Pending(req, fut, work, bucket_buf))
    return fut


def _sparse_modules(module):
    for name, m in module.named_modules():
        if getattr(m, "sparse", False) is True:
            yield name or type(m).__name__, type(m).__name__


def init_process_group(backend="gloo", comm=None, timeout_s=300):
    """torch.distributed.init_process_group for a job started by mpirun: rank and world size from
    MPI, the rendezvous at rank 0's host (its name as rank 0 resolves it; MASTER_ADDR overrides
    it) on a free port rank 0 picks (MASTER_PORT overrides it). Returns (rank, world size)."""
    import datetime
    import os
    import socket

    comm = comm if comm is not None else MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    addr = port = None
    if rank == 0:
        addr = os.environ.get("MASTER_ADDR") or socket.gethostbyname(socket.gethostname())
        port = os.environ.get("MASTER_PORT")
        if not port:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind((addr, 0))
                port = s.getsockname()[1]
    addr, port = comm.bcast((addr, port), root=0)
    dist.init_process_group(backend, init_method="tcp://%s:%s" % (addr, port), rank=rank, world_size=size,
                            timeout=datetime.timedelta(seconds=timeout_s))
    return rank, size


def register(ddp_model, comm=None, poll_interval_s=100e-6):
    """Registers the hook on a DistributedDataParallel model; returns its HookState.

    comm: the mpi4py communicator whose ranks are DDP's (default MPI.COMM_WORLD; the hook sums on
    a duplicate of it). Collective: every rank calls it, in the same order for several models.
    """
    for name, kind in _sparse_modules(ddp_model.module):
        raise HookError(
            "apsmpi_ddp: module '%s' (%s, sparse=True) has sparse gradients, which the hook cannot sum; "
            "make it dense or leave this model to DDP's default allreduce" % (name, kind)
        )
    state = HookState(process_group=getattr(ddp_model, "process_group", None), comm=comm,
                      poll_interval_s=poll_interval_s)
    ddp_model.register_comm_hook(state, mpi_allreduce_hook)
    return state
