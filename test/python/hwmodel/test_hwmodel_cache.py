"""The cache simulator against counts derived by hand (hwmodel/cache.py)."""

from __future__ import annotations

import numpy as np
import pytest
from tapeflow.hwmodel.cache import CacheParams, CacheSim, numba_available

BACKENDS = ["python", *(["numba"] if numba_available() else [])]
LINE = 64


def run(params: CacheParams, addrs, writes=None, pcs=None, backend="python") -> CacheSim:
    sim = CacheSim(params, backend=backend)
    addrs = np.asarray(addrs, dtype=np.int64)
    writes = np.zeros(len(addrs), np.int64) if writes is None else np.asarray(writes, np.int64)
    pcs = np.zeros(len(addrs), np.int64) if pcs is None else np.asarray(pcs, np.int64)
    sim.access_batch(addrs, pcs, writes)
    return sim


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [8, 1000, 50_000])
def test_stream_without_prefetch_misses_once_per_line(backend: str, n: int):
    # N doubles read once from a cold cache: one miss per 64-byte line, the rest hit.
    base = 1 << 20
    sim = run(CacheParams(prefetch=False), base + 8 * np.arange(n), backend=backend)
    c = sim.counters
    lines = -(-n * 8 // LINE)
    assert c["l1_accesses"] == n
    assert c["l1_misses"] == lines
    assert c["l1_hits"] == n - lines
    assert c["l2_misses"] == lines
    assert c["dram_lines_read"] == lines
    assert c["l1_prefetches"] == 0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("direction", [1, -1])
def test_stride_prefetcher_covers_forward_and_backward_streams(backend: str, direction: int):
    n = 64 * 1024  # 512 KiB of doubles: 8192 lines, 128 pages of 4 KiB
    idx = np.arange(n) if direction > 0 else np.arange(n)[::-1]
    addrs = (1 << 24) + 8 * idx
    off = run(CacheParams(prefetch=False), addrs, backend=backend).counters
    on = run(CacheParams(prefetch=True), addrs, backend=backend).counters
    lines = n * 8 // LINE
    assert off["l1_misses"] == lines
    # The prefetcher stops at 4 KiB pages, so each page's first line still misses.
    pages = n * 8 // 4096
    assert on["l1_misses"] <= pages + 4
    assert on["l1_misses"] < off["l1_misses"] // 20
    assert on["l1_prefetches_useful"] >= lines - on["l1_misses"] - 8
    # Prefetching moves the same lines, it does not invent traffic.
    assert lines <= on["dram_lines_read"] <= lines + 4 * pages
    assert on["dram_demand_lines_read"] == on["l2_misses"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_prefetcher_detects_large_strides(backend: str):
    # One double every 256 bytes (a column walk): each access is a new line.
    n = 4096
    addrs = (1 << 24) + 256 * np.arange(n)
    off = run(CacheParams(prefetch=False), addrs, backend=backend).counters
    on = run(CacheParams(prefetch=True), addrs, backend=backend).counters
    assert off["l1_misses"] == n
    assert on["l1_misses"] < n // 5


@pytest.mark.parametrize("backend", BACKENDS)
def test_lru_set_conflicts(backend: str):
    # Lines that map to one L1 set: 8 of them fit (8-way), 9 thrash under LRU.
    params = CacheParams(prefetch=False)
    set_stride = params.l1_size // params.l1_assoc  # same set, different tag
    for ways, expect_hits in ((8, 8 * 9), (9, 0)):
        addrs = [(1 << 20) + k * set_stride for _ in range(10) for k in range(ways)]
        c = run(params, addrs, backend=backend).counters
        assert c["l1_hits"] == expect_hits, ways
        # All of them still fit in L2 (16-way, more sets): only compulsory DRAM reads.
        assert c["dram_lines_read"] == ways


@pytest.mark.parametrize("backend", BACKENDS)
def test_write_back_conserves_dirty_lines(backend: str):
    # Store a stream 3x larger than L2: every line is read once (write-allocate) and is
    # either written back to DRAM or still dirty in a cache at the end.
    params = CacheParams(prefetch=False)
    lines = 3 * params.l2_size // LINE
    addrs = (1 << 30) + LINE * np.arange(lines)
    sim = run(params, addrs, writes=np.ones(lines), backend=backend)
    c = sim.counters
    l1_dirty, l2_dirty = sim.dirty_lines()
    assert c["dram_lines_read"] == lines
    assert l1_dirty == params.l1_size // LINE
    assert c["dram_lines_written"] + l1_dirty + l2_dirty == lines
    assert c["l1_writebacks"] == lines - l1_dirty


def test_reads_do_not_write_back():
    params = CacheParams(prefetch=False)
    lines = 2 * params.l2_size // LINE
    c = run(params, LINE * np.arange(lines)).counters
    assert c["dram_lines_written"] == 0
    assert c["l1_writebacks"] == 0


@pytest.mark.skipif(not numba_available(), reason="numba is not installed (extra 'fast')")
@pytest.mark.parametrize("prefetch", [False, True])
def test_numba_and_python_paths_agree(prefetch: bool):
    rng = np.random.default_rng(7)
    n = 60_000
    # A mix: two streams (one backward), random accesses, stores, several PCs.
    a = (1 << 22) + 8 * np.arange(n // 3)
    b = (1 << 26) + 8 * np.arange(n // 3)[::-1]
    r = (1 << 28) + 8 * rng.integers(0, 1 << 18, n // 3)
    addrs = np.stack([a, b, r], axis=1).reshape(-1)
    pcs = np.tile([1, 2, 3], n // 3)
    writes = rng.integers(0, 2, len(addrs))
    params = CacheParams(prefetch=prefetch, l1_size=8192, l2_size=65536)
    py = CacheSim(params, backend="python")
    nb = CacheSim(params, backend="numba")
    for lo in range(0, len(addrs), 7000):  # several batches
        sl = slice(lo, lo + 7000)
        py.access_batch(addrs[sl], pcs[sl], writes[sl])
        nb.access_batch(addrs[sl], pcs[sl], writes[sl])
    assert py.counters == nb.counters
    assert py.dirty_lines() == nb.dirty_lines()
    assert py.counters["l1_misses"] > 0


def test_unknown_backend_is_an_error():
    with pytest.raises(ValueError, match="unknown cache backend"):
        CacheSim(CacheParams(), backend="gpu")


def _pycachesim():
    try:
        import cachesim  # type: ignore[import-not-found]
    except ImportError:
        return None
    return cachesim


@pytest.mark.skipif(_pycachesim() is None, reason="pycachesim (dev-only oracle) not installed")
def test_cross_check_with_pycachesim():
    cachesim = _pycachesim()
    params = CacheParams(prefetch=False, l1_size=8192, l2_size=65536)
    mem = cachesim.MainMemory()
    l2 = cachesim.Cache("L2", params.l2_size // (16 * LINE), 16, LINE, "LRU")
    mem.load_to(l2)
    mem.store_from(l2)
    l1 = cachesim.Cache("L1", params.l1_size // (8 * LINE), 8, LINE, "LRU",
                        store_to=l2, load_from=l2)  # fmt: skip
    cs = cachesim.CacheSimulator(l1, mem)
    rng = np.random.default_rng(3)
    addrs = ((1 << 20) + 8 * rng.integers(0, 40_000, 100_000)).tolist()
    cs.load(addrs, length=8)
    ours = run(params, addrs).counters
    stats = list(cs.stats())
    assert ours["l1_misses"] == stats[0]["MISS_count"]
    assert ours["l2_misses"] == stats[1]["MISS_count"]


def _state(sim: CacheSim) -> list[list[int]]:
    """Both levels' tags, dirty and prefetch marks, the stride table (not the lookup
    shortcut's own entries) and the counters."""
    return [[int(x) for x in a] for a in (*sim._state, *sim._pf[:4], sim._c)]  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize("table", [8, 6])  # a power of two (masked) or not (modulo)
@pytest.mark.parametrize("backend", BACKENDS)
def test_prefetch_lookup_shortcut_changes_nothing(backend: str, table: int):
    """The kernel skips a trained entry's target lookups when the last ones had the same
    targets, found them all and L1 has not been filled since. Reference: the same
    accesses one at a time with the shortcut forgotten before each. Streams of strides
    below, at and above a line, forward and backward, across pages, on a small L1 whose
    lines are evicted between the accesses of a stream, and PCs sharing table entries."""
    rng = np.random.default_rng(11)
    streams = []
    for k, stride in enumerate((8, -8, 16, 64, -64, 200, -520, 8)):
        start = (1 << 22) * (k + 1) + 4096 * 3 - 40
        streams.append(start + stride * np.arange(700))
    addrs = np.stack(streams, axis=1).reshape(-1)
    pcs = np.tile(np.arange(8), 700)
    noise = rng.random(len(addrs)) < 0.05  # random accesses evict targets at random
    addrs[noise] = (1 << 28) + 8 * rng.integers(0, 1 << 16, int(noise.sum()))
    writes = rng.integers(0, 2, len(addrs))
    params = CacheParams(l1_size=2048, l1_assoc=2, l2_size=16384, l2_assoc=4, table=table,
                         page=4096)  # fmt: skip
    batched = CacheSim(params, backend=backend)
    for lo in range(0, len(addrs), 999):
        sl = slice(lo, lo + 999)
        batched.access_batch(addrs[sl], pcs[sl], writes[sl])
    ref = CacheSim(params, backend="python")
    steps, fills = ref._pf[5], ref._pf[6]  # pyright: ignore[reportPrivateUsage]
    for i in range(len(addrs)):
        steps[:] = [0] * len(steps)  # no lookup had step 0: none matches
        fills[:] = [-1] * len(fills)
        ref.access_batch(addrs[i : i + 1], pcs[i : i + 1], writes[i : i + 1])
    assert _state(batched) == _state(ref)
    c = ref.counters
    assert c["l1_prefetches"] > 1000 and c["l1_prefetches_useful"] > 1000
    assert c["l1_writebacks"] > 0
