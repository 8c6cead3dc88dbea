"""Ctrl-C during `tapeflow-bench` on a Dask cluster: one line saying what was kept, exit
status 130, no traceback and no Dask warnings (the workers ignore the SIGINT their
process group gets; the driver closes them)."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="needs Dask")
def test_ctrl_c_stops_the_bench_cleanly(tmp_path: Path):
    """The Ctrl-C comes as soon as a worker has finished a run: both workers are then in
    a task. Tasks go longest first: mlp's (default size, a minute or more) on one worker,
    softmax_ce's on the other, whose first run ends a few seconds in (then ba's, pairwise's)."""
    bench = Path(sys.executable).parent / "tapeflow-bench"
    out = tmp_path / "out"
    process = subprocess.Popen(
        [str(bench), "--kernels", "mlp,softmax_ce,ba,pairwise", "--machine", "default-45nm",
         "-j", "2", "--no-plots", "--sweep", "none", "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        # SIGINT as a terminal's foreground job has it: a shell starts a background job
        # (`cmd &` without job control, as CI scripts do) with SIGINT ignored, and the
        # bench would inherit that and never see the Ctrl-C.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    received: list[str] = []
    running = threading.Event()

    def read_stderr() -> None:
        for line in process.stderr:  # off a terminal, a worker's run ends with a line
            received.append(line.rstrip("\n"))
            if line.rstrip().endswith("into its task)"):  # "KERNEL: VARIANTS done (N s ...)"
                running.set()
        running.set()  # the bench ended early: the assertions below say how

    reader = threading.Thread(target=read_stderr)
    reader.start()
    running.wait(timeout=600)  # seconds on an idle machine
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    process.wait(timeout=120)
    reader.join(timeout=10)
    err = "\n".join(received)
    assert process.returncode == 130, err
    lines = err.splitlines()  # progress lines, then what was kept: nothing else
    assert all(line.startswith("tapeflow-bench: ") for line in lines), err
    assert "interrupted" in lines[-1] and "nothing was written" in lines[-1], err
    assert not (out / "results.md").exists()


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="needs Dask")
def test_ctrl_c_while_the_cluster_starts_is_not_lost(monkeypatch: pytest.MonkeyPatch):
    """A Ctrl-C while the LocalCluster starts interrupts the driver once it has started,
    and the cluster is closed. The SIGINT arrives on a thread started before (as Dask's
    are), which does not block it: ignored then, that thread would drop it."""
    import dask.distributed

    from tapeflow.eval import pool

    pressed, closed = threading.Event(), []

    def ctrl_c() -> None:
        pressed.wait()
        os.kill(os.getpid(), signal.SIGINT)

    class Cluster:
        def __init__(self, **_: object) -> None:
            pressed.set()
            time.sleep(0.5)  # the start goes on; the SIGINT arrives meanwhile

        def close(self) -> None:
            closed.append(True)

    class Client:
        def __init__(self, _: object) -> None: ...

        def run(self, *_: object) -> None: ...

        def close(self) -> None: ...

    monkeypatch.setattr(pool, "_start_forkserver", lambda: None)
    monkeypatch.setattr(dask.distributed, "LocalCluster", Cluster)
    monkeypatch.setattr(dask.distributed, "Client", Client)
    thread = threading.Thread(target=ctrl_c)
    thread.start()
    with pytest.raises(KeyboardInterrupt):
        pool.Pool(workers=2).__enter__()
    thread.join()
    assert closed == [True]
