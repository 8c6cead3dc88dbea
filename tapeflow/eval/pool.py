"""Where tasks run (`Pool`): in this process (one worker), on a Dask `LocalCluster`
(more), or on an existing scheduler; `tapeflow-bench` and `tapeflow-sweep` share it."""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from tapeflow.diagnostics import ToolError

HOUSEKEEPING = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.scheduler.work-stealing-interval": "1s",
}
"""Dask settings of the LocalCluster that `Pool` starts: background work at rates for
long tasks (benchmarks/dask_overhead.py measures the CPU it takes)."""


class _InlineFuture:
    """A task run in this process when its result is first asked for."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]):
        self._fn, self._args = fn, args
        self._done = False
        self._value: Any = None
        self._error: BaseException | None = None

    def result(self) -> Any:
        if not self._done:
            try:
                self._value = self._fn(*self._args)
            except Exception as e:
                self._error = e
            self._done = True
        if self._error is not None:
            raise self._error
        return self._value


class _InlineCompleted:
    """`distributed.as_completed` for inline futures: runs them in the order added."""

    def __init__(self) -> None:
        self._queue: deque[_InlineFuture] = deque()

    def add(self, future: _InlineFuture) -> None:
        self._queue.append(future)

    def __iter__(self) -> Iterator[_InlineFuture]:
        while self._queue:
            future = self._queue.popleft()
            try:
                future.result()
            except Exception:
                pass  # raised again by the caller's `result()`
            yield future


class Pool:
    """Where tasks run: this process (`workers` <= 1, no scheduler), a Dask `LocalCluster`
    of `workers` single-threaded processes, or the Dask scheduler at `scheduler`."""

    def __init__(self, workers: int = 1, scheduler: str | None = None,
                 memory_limit: str | None = None,
                 dask_config: dict[str, Any] | None = None) -> None:  # fmt: skip
        """`dask_config`: Dask settings for the LocalCluster over `HOUSEKEEPING`'s."""
        self.workers = workers
        self.dask_config = dask_config or {}
        self.scheduler = scheduler
        self.memory_limit = memory_limit
        self.client: Any = None
        self._cluster: Any = None
        self._config: Any = None

    def __enter__(self) -> Pool:
        if self.scheduler is None and self.workers <= 1:
            return self
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ToolError("more than one worker needs Dask distributed: "
                            "pip install -e '.[sweep]' (or run with one worker)") from None

        if self.scheduler is not None:
            try:
                self.client = Client(self.scheduler, timeout="15s")
            except (OSError, TimeoutError) as e:
                raise ToolError(f"cannot reach the Dask scheduler at {self.scheduler}: "
                                f"{e}") from None  # fmt: skip
        else:
            import dask

            # forkserver children end with os._exit: a worker that ran numba-compiled code
            # takes seconds to finalise a spawned interpreter (the nanny then kills it).
            # One task per worker at a time (saturation 1.0, not 2 of 1.1): the queue stays
            # on the scheduler, so a worker that frees up takes the next task by priority
            # (longest first) instead of one queued behind another's long task.
            # Housekeeping at Dask's default rates (the workers' stack profiler every 10 ms,
            # event-loop ticks every 20 ms, memory checks every 100 ms...) took about 9% of
            # one core on this machine, idle or not; tasks here last seconds to minutes.
            self._config = dask.config.set({
                "distributed.worker.multiprocessing-method": "forkserver",
                "distributed.scheduler.worker-saturation": 1.0,
                **HOUSEKEEPING,
                **self.dask_config,
            })  # fmt: skip
            try:
                with _ctrl_c_deferred():
                    _start_forkserver()
                    self._cluster = LocalCluster(  # dashboard on a free port: never a clash
                        n_workers=self.workers, threads_per_worker=1, processes=True,
                        dashboard_address=":0", memory_limit=self.memory_limit or "auto",
                    )  # fmt: skip
                    self.client = Client(self._cluster)
            except KeyboardInterrupt:  # a Ctrl-C while the cluster started: close it
                self.__exit__(KeyboardInterrupt)
                raise
        return self

    def __exit__(self, kind: Any, *exc: object) -> None:
        if kind is not None and issubclass(kind, KeyboardInterrupt):
            # Ctrl-C: the cluster is torn down with its tasks running; Dask's warnings
            # about the cancelled tasks and killed workers say nothing to the user.
            logging.disable(logging.CRITICAL)
            if self._cluster is not None:
                with contextlib.suppress(Exception):
                    self.client.run(_quiet)
        if self.client is not None:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()
        if self._config is not None:
            self._config.__exit__(None, None, None)
        self.client = self._cluster = self._config = None

    def worker_cpu_s(self) -> dict[int, float] | None:
        """CPU seconds (user + system) of each worker process so far, by pid: everything
        it did, imports and Dask included. None when tasks run in this process."""
        if self.client is None:
            return None
        return {pid: cpu for pid, cpu in self.client.run(_process_cpu_s).values()}

    @property
    def distributed(self) -> bool:
        return self.client is not None

    def submit(self, fn: Callable[..., Any], *args: Any, key: str | None = None,
               priority: int = 0) -> Any:  # fmt: skip
        if self.client is None:
            return _InlineFuture(fn, args)
        if key is None:
            return self.client.submit(fn, *args, pure=False, priority=priority)
        return self.client.submit(fn, *args, key=key, priority=priority)

    def as_completed(self) -> Any:
        """An iterator over finished futures that accepts more futures (`add`) meanwhile."""
        if self.client is None:
            return _InlineCompleted()
        from dask.distributed import as_completed

        return as_completed()


def _start_forkserver() -> None:
    """The forkserver that every worker process is forked from, started now with Dask's
    preload (`get_mp_context` sets it once)."""
    from multiprocessing import forkserver

    from distributed.utils import get_mp_context

    get_mp_context()
    with _ignored_by_children():
        forkserver.ensure_running()


@contextlib.contextmanager
def _ignored_by_children() -> Iterator[None]:
    """SIGINT ignored while the forkserver starts (milliseconds): it keeps that
    disposition through its exec, and so do the workers it forks, so a Ctrl-C interrupts the driver only, which
    then closes the cluster (the workers, hit too, would print tracebacks of their
    cancelled tasks). Blocked meanwhile too, so that a Ctrl-C in this short window stays
    pending for the driver."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextlib.contextmanager
def _ctrl_c_deferred() -> Iterator[None]:
    """A Ctrl-C while the cluster starts (seconds on a loaded machine) raised once it has
    started, so that it can be closed whole. SIGINT is neither ignored nor blocked here:
    Dask's threads started before do not block it, and one of them would take an ignored
    SIGINT and drop it, leaving the run to go on to its end; with a handler any thread
    that takes it sets the flag."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed: list[bool] = []
    old = signal.signal(signal.SIGINT, lambda *_: pressed.append(True))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
    if pressed:
        raise KeyboardInterrupt


def _quiet() -> None:
    logging.disable(logging.CRITICAL)


def _process_cpu_s() -> tuple[int, float]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return os.getpid(), r.ru_utime + r.ru_stime


def run_unordered(pool: Pool, fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Any]:
    """`fn(item)` for every item on `pool`, yielded as they finish (first items first)."""
    done = pool.as_completed()
    for i, item in enumerate(items):
        done.add(pool.submit(fn, item, priority=len(items) - i))
    for future in done:
        yield future.result()


def progress_bar(total: int, enabled: bool, desc: str, unit: str = "run") -> Any:
    """A tqdm bar on stderr (None when disabled or tqdm is missing)."""
    if not enabled or total == 0:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit=unit, file=sys.stderr, dynamic_ncols=True, desc=desc)
