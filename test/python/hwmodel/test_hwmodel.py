"""The hardware model (tapeflow-sim) against numbers derived by hand."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from tapeflow.hwmodel.config import ConfigError, load_machine
from tapeflow.simulate import simulate
from xdsl.utils.exceptions import InterpretationError

from helpers.cli import run_main
from helpers.ir import DMA
from helpers.paths import ROOT
from tapeflow import runner
from tapeflow.example_ir import stream_kernel

LINE = 64


def sim(text: str, entry: str, args=(), sets=(), **kw):
    module = runner.load_module(text, "k.mlir")
    return simulate(module, entry, list(args), load_machine(overrides=sets), **kw)


@pytest.mark.parametrize("n", [64, 4096])
def test_stream_once_misses_once_per_line_without_prefetch(n: int):
    data = np.linspace(-1, 1, n)
    r = sim(stream_kernel(n=n), "sum", [data], sets=["prefetch.enabled=false"])
    lv = r.report["levels"]
    assert lv["L1"]["accesses"] == n
    assert lv["L1"]["misses"] == n * 8 // LINE
    assert lv["L2"]["misses"] == n * 8 // LINE
    assert r.report["dram"]["bytes_read"] == n * 8
    assert r.report["dram"]["bytes_written"] == 0
    # Values are the interpreter's.
    assert r.report["results"][0]["value"] == runner.run_function(
        runner.load_module(stream_kernel(n=n), "k.mlir"), "sum", [data]
    ).results[0]


def test_stream_with_prefetcher_mostly_covered():
    n = 8192
    off = sim(stream_kernel(n=n), "sum", [np.ones(n)], sets=["prefetch.enabled=false"])
    on = sim(stream_kernel(n=n), "sum", [np.ones(n)])
    misses_off = off.report["levels"]["L1"]["misses"]
    misses_on = on.report["levels"]["L1"]["misses"]
    assert misses_off == n * 8 // LINE
    assert misses_on <= n * 8 // 4096 + 2  # about one per 4 KiB page
    # Fewer exposed misses -> fewer cycles; the DRAM bytes are the same lines.
    assert on.report["cycle_terms"]["T_exposed"] < off.report["cycle_terms"]["T_exposed"] / 10
    assert on.report["cycles"] < off.report["cycles"]
    assert on.report["dram"]["bytes_read"] >= n * 8


def test_cycle_terms_follow_the_equations():
    n = 4096
    r = sim(stream_kernel(n=n), "sum", [np.ones(n)], sets=["prefetch.enabled=false"])
    t = r.report["cycle_terms"]
    m = load_machine()
    lines = n * 8 // LINE
    # n loads on 2 load ports.
    assert t["T_nOL"] == n / m.get("core", "load_ports")
    # n addf + n loads + (n+1) loop branches on a 4-wide core; n addf on 2 fp ports.
    assert t["T_OL"] == pytest.approx(max((3 * n + 1) / 4, n / 2))
    assert t["T_L2"] == pytest.approx(lines * LINE / m.l2.bandwidth)
    assert t["T_DRAM"] == pytest.approx(lines * LINE / m.get("dram", "bandwidth"))
    assert t["T_exposed"] == pytest.approx(
        lines * m.get("dram", "latency") / m.get("core", "mlp")
    )
    assert r.report["cycles"] == pytest.approx(
        max(t["T_OL"], t["T_nOL"] + t["T_L2"] + t["T_DRAM"]) + t["T_exposed"]
    )


@pytest.mark.parametrize(("k", "setup", "bw"), [(512, 50, 12.8), (2048, 0, 8.0), (256, 300, 16.0)])
def test_dma_takes_setup_plus_bytes_over_bandwidth(k: int, setup: int, bw: float):
    # No work between commit and wait, nor between prefetch and acquire: both DMAs are
    # fully exposed, each setup + B/W cycles.
    sets = [f"dma.setup={setup}", f"dram.bandwidth={bw}", "dma.spm_port=64.0"]
    r = sim(DMA.format(k=k, work=0), "dma", [1.0], sets=sets)
    nbytes = k * 8
    expected = setup + load_machine().get("dram", "latency") + nbytes / bw  # + 1st latency
    d = r.report["dma"]
    assert d["transfers"] == 2
    assert d["bytes_to_dram"] == nbytes
    assert d["bytes_to_spm"] == nbytes
    assert d["stalls"] == 2
    assert d["stall_cycles"] == pytest.approx(2 * expected)
    t = r.report["cycle_terms"]
    assert r.report["cycles"] == pytest.approx(t["T_core"] + 2 * expected)
    assert r.report["dram"]["bytes_read"] == nbytes
    assert r.report["dram"]["bytes_written"] == nbytes


def test_dma_moves_whole_requests():
    # 5 records of f64 = 40 bytes: one 64-byte request; 9 records = 72 bytes: two.
    for k, requests in ((5, 1), (9, 2)):
        r = sim(DMA.format(k=k, work=0), "dma", [1.0], sets=["dma.setup=10"])
        assert r.report["dma"]["bytes"] == 2 * k * 8  # bytes moved for the program
        stall = 2 * (10 + 160 + requests * 64 / 12.8)  # setup + DRAM latency + data
        assert r.report["dma"]["stall_cycles"] == pytest.approx(stall)


def test_dma_bandwidth_is_bounded_by_the_scratchpad_port():
    # BW_dma = min(dram.bandwidth, dma.spm_port)
    r = sim(DMA.format(k=512, work=0), "dma", [1.0],
            sets=["dma.spm_port=4.0", "dma.setup=0", "dram.latency=0"])  # fmt: skip
    assert r.report["dma"]["stall_cycles"] == pytest.approx(2 * 4096 / 4.0)
    assert r.report["dma"]["bandwidth_bound_by"] == "dma.spm_port"


def test_compute_between_commit_and_wait_hides_the_dma():
    k = 512
    exposed = 50 + 160 + k * 8 / 12.8  # setup + DRAM latency + data: 530 cycles
    # The mulf loop is bound by the 4-wide issue: (mulf + mem-free yield) ... each
    # iteration is 1 fp_mul + 1 branch = 2 slots -> 0.5 cycle; 4000 iterations = 2000
    # cycles, far more than 530: the commit is hidden; the prefetch is still exposed.
    hidden = sim(DMA.format(k=k, work=4000), "dma", [1.0])
    assert hidden.report["dma"]["stalls"] == 1
    assert hidden.report["dma"]["stall_cycles"] == pytest.approx(exposed)
    # 200 iterations = 100 cycles of work: the commit is exposed by 530 - 100.
    partly = sim(DMA.format(k=k, work=200), "dma", [1.0])
    assert partly.report["dma"]["stall_cycles"] == pytest.approx(exposed + exposed - 100)
    # Values are unaffected by timing.
    assert hidden.report["results"][0]["value"] == 2.0
    assert partly.report["results"][0]["value"] == 2.0


def test_energy_components_add_up_and_follow_the_table():
    k = 512
    r = sim(DMA.format(k=k, work=10), "dma", [1.0])
    e = r.report["energy"]
    comp = e["components_pj"]
    assert sum(comp.values()) == pytest.approx(e["total_pj"])
    assert e["on_chip_pj"] + e["off_chip_pj"] == pytest.approx(e["total_pj"])
    assert e["off_chip_pj"] == comp["DRAM"]
    m = load_machine()
    # DRAM: two tiles of k doubles moved by DMA, no cache traffic.
    assert comp["DRAM"] == pytest.approx(2 * k * 8 * m.get("dram", "energy_pj_per_byte"))
    # SPM: k stores + 1 load by the core, plus 2 tiles of k words by DMA.
    assert comp["SPM"] == pytest.approx((k + 1 + 2 * k) * m.spm_access_energy_pj)
    # SPM energy scales as sqrt(capacity): 32 KiB -> 0.6 * 10 * 2 = 12 pJ per word.
    assert m.spm_access_energy_pj == pytest.approx(12.0)


def test_energy_adds_up_with_caches():
    n = 4096
    r = sim(stream_kernel(n=n), "sum", [np.ones(n)], sets=["prefetch.enabled=false"])
    e = r.report["energy"]
    assert sum(e["components_pj"].values()) == pytest.approx(e["total_pj"])
    m = load_machine()
    lines = n * 8 // LINE
    # L1: n word reads + `lines` fills of 8 words; L2: `lines` supplied + `lines` filled.
    assert e["components_pj"]["L1"] == pytest.approx((n + 8 * lines) * 20.0)
    assert e["components_pj"]["L2"] == pytest.approx(2 * 8 * lines * 100.0)
    assert e["components_pj"]["DRAM"] == pytest.approx(n * 8 * 162.5)
    # compute: n fp adds + (n+1) loop branches
    ops = m.ops
    assert e["components_pj"]["compute"] == pytest.approx(
        n * ops["fp_add"].energy_pj + (n + 1) * ops["branch"].energy_pj
    )


def test_scratchpad_overflow_is_an_error():
    with pytest.raises(InterpretationError, match="scratchpad overflow"):
        sim(DMA.format(k=512, work=0), "dma", [1.0], sets=["spm.size=2048"])


SPM_MEMREF = """
func.func @f() -> f64 {
  %c0 = arith.constant 0 : index
  %x = arith.constant 3.0 : f64
  %a = memref.alloc() : memref<256xf64, #stream.spm>
  %b = memref.alloc() : memref<128xf64, #stream.spm>
  memref.store %x, %a[%c0] : memref<256xf64, #stream.spm>
  memref.dealloc %a : memref<256xf64, #stream.spm>
  %c = memref.alloc() : memref<64xf64, #stream.spm>
  memref.store %x, %c[%c0] : memref<64xf64, #stream.spm>
  %v = memref.load %c[%c0] : memref<64xf64, #stream.spm>
  memref.dealloc %b : memref<128xf64, #stream.spm>
  memref.dealloc %c : memref<64xf64, #stream.spm>
  func.return %v : f64
}
"""


def test_scratchpad_memrefs_high_water_mark():
    r = sim(SPM_MEMREF, "f")
    s = r.report["sram"]
    # 256 + 128 doubles live at once; later 128 + 64 < that.
    assert s["spm_high_water_bytes"] == (256 + 128) * 8
    assert s["in_use_bytes"] == (256 + 128) * 8
    assert r.report["levels"]["SPM"]["accesses"] == 3
    assert r.report["levels"]["L1"]["accesses"] == 0
    with pytest.raises(InterpretationError, match="scratchpad overflow"):
        sim(SPM_MEMREF, "f", sets=["spm.size=3000"])


TAPE = """
func.func @t(%a: memref<{n}xf64>) -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {n} : index
  %z = arith.constant 0.0 : f64
  %c = tape.init : !tape.cache<f64>
  scf.for %i = %c0 to %n step %c1 {{
    %v = memref.load %a[%i] : memref<{n}xf64>
    tape.push %c, %v : !tape.cache<f64>
  }}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {{
    %v = tape.pop %c : !tape.cache<f64>
    %s = arith.addf %acc, %v : f64
    scf.yield %s : f64
  }}
  tape.free %c : !tape.cache<f64>
  func.return %r : f64
}}
"""


def test_unlowered_tape_goes_through_the_caches():
    n = 2048
    r = sim(TAPE.format(n=n), "t", [np.ones(n)], sets=["prefetch.enabled=false"])
    rep = r.report
    assert rep["tape_bytes"] == n * 8
    # n loads of the input, n pushes (stores), n pops (loads).
    assert rep["levels"]["L1"]["accesses"] == 3 * n
    assert rep["ops"]["stores"] == n
    # 16 KiB input + 16 KiB tape: both fit in L1 (32 KiB), so pops hit; misses are
    # the compulsory ones of input and tape.
    assert rep["levels"]["L1"]["misses"] == 2 * n * 8 // LINE
    assert rep["results"][0]["value"] == float(n)


RECORDS = """
func.func @r(%x: f64, %b: i1) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1024 : index
  %t = region.alloc count = 1024 : !region.tape<!region.record<f64, i1>>
  scf.for %i = %c0 to %n step %c1 {
    region.write %t[%i], %x, %b : !region.tape<!region.record<f64, i1>>
  }
  %v, %c = region.read %t[%c1] : !region.tape<!region.record<f64, i1>>
  region.dealloc %t : !region.tape<!region.record<f64, i1>>
  func.return %v : f64
}
"""


def test_dram_record_tape_through_caches():
    r = sim(RECORDS, "r", [2.0, True], sets=["prefetch.enabled=false"])
    rep = r.report
    # record<f64, i1> is 16 bytes: 1024 records = 16 KiB = 256 lines, two field
    # accesses per write.
    assert rep["tape_bytes"] == 1024 * 16
    assert rep["levels"]["L1"]["accesses"] == 2 * 1024 + 2
    assert rep["levels"]["L1"]["misses"] == 1024 * 16 // LINE
    assert rep["sram"]["in_use_is"] == "cache_capacity"


def test_config_overrides_and_errors(tmp_path: Path):
    m = load_machine(overrides=["l2.size=262144", "prefetch.enabled=false"])
    assert m.l2.size == 262144
    assert m.raw["prefetch"]["enabled"] is False
    f = tmp_path / "m.toml"
    f.write_text("[spm]\nsize = 8192\n[dram]\nbandwidth = 6.4\n")
    m = load_machine(f, ["dram.latency=200"])
    assert m.spm_size == 8192
    assert m.get("dram", "bandwidth") == 6.4
    assert m.get("dram", "latency") == 200
    # 8 KiB: 0.6 * 10 pJ * sqrt(1) = 6 pJ; latency round(4 * (1/4)^0.36) = 2 cycles.
    assert m.spm_access_energy_pj == pytest.approx(6.0)
    assert m.spm_latency == 2
    for bad, message in [
        ("l2.size=1000", "'l2.size' must be a power of two"),
        ("l1.bogus=1", "unknown machine key 'l1.bogus'"),
        ("core.issue_width=wide", "'core.issue_width' must be an integer"),
        ("dram.bandwidth=-1", "'dram.bandwidth' must be > 0"),
        ("ops.fp_mul.port=gpu", "'ops.fp_mul.port' must be one of"),
        ("nonsense", "--set expects section.key=value"),
        ("ops.fp_quad.cycles=1", "unknown op class 'ops.fp_quad'"),
    ]:
        with pytest.raises(ConfigError, match=message):
            load_machine(overrides=[bad])
    f.write_text("[l1\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_machine(f)


def test_every_default_number_has_a_source():
    text = (ROOT / "hwmodel" / "defaults.toml").read_text()
    section = ""
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("["):
            section = s
            continue
        if not s or s.startswith("#") or "=" not in s:
            continue
        key = s.split("=")[0].strip()
        if section.startswith("[ops.") or section == "[meta]":
            continue  # op classes carry a `source` field (checked below)
        assert "#" in s, f"{section} {key} has no source comment"
    m = load_machine()
    for name, entry in m.raw["ops"].items():
        assert entry.get("source"), f"ops.{name} has no source"


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    from tapeflow.tools.sim import main

    return run_main(main, args, stdin)


def test_cli_json_and_table(tmp_path: Path):
    f = tmp_path / "k.mlir"
    f.write_text(stream_kernel(n=512))
    p = _cli(str(f), "--entry", "sum", "--json", "--set", "prefetch.enabled=false")
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert rep["levels"]["L1"]["misses"] == 512 * 8 // LINE
    # default fill rule: uniform(-1, 1) with seed [0, 0]
    expect = float(np.sum(np.random.default_rng([0, 0]).uniform(-1.0, 1.0, 512)))
    assert math.isclose(rep["results"][0]["value"], expect, rel_tol=1e-12)
    p = _cli(str(f), "--entry", "sum")
    assert p.returncode == 0, p.stderr
    assert "cycles:" in p.stdout
    assert "energy (pJ):" in p.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--entry", "nope"], "no function @nope"),
        (["--entry", "sum", "--set", "l1.assoc=0"], "'l1.assoc' must be > 0"),
        (["--entry", "sum", "--machine", "/nonexistent.toml"], "cannot read machine file"),
    ],
)
def test_cli_errors_have_no_traceback(tmp_path: Path, args: list[str], message: str):
    f = tmp_path / "k.mlir"
    f.write_text(stream_kernel(n=64))
    p = _cli(str(f), *args)
    assert p.returncode == 1
    assert p.stderr.startswith("error: ")
    assert message in p.stderr
    assert "Traceback" not in p.stderr


def test_cli_scratchpad_overflow(tmp_path: Path):
    f = tmp_path / "d.mlir"
    f.write_text(DMA.format(k=512, work=0))
    p = _cli(str(f), "--entry", "dma", "--args", "1.0", "--set", "spm.size=1024")
    assert p.returncode == 1
    assert "scratchpad overflow" in p.stderr
    assert "Traceback" not in p.stderr


# ---- the fast (compiled) path must give the op-by-op model's report, number for number

_FAST_CASES = [
    (stream_kernel(n=1024), "sum", [np.linspace(0, 1, 1024)]),
    (DMA.format(k=512, work=200), "dma", [1.5]),
    (DMA.format(k=64, work=3000), "dma", [0.5]),
    (TAPE.format(n=700), "t", [np.arange(700.0)]),
    (RECORDS, "r", [2.0, True]),
    (SPM_MEMREF, "f", []),
]


@pytest.mark.parametrize("case", range(len(_FAST_CASES)))
@pytest.mark.parametrize("prefetch", [True, False])
def test_fast_path_matches_op_by_op(case: int, prefetch: bool):
    from tapeflow.simulate import simulate_fast

    text, entry, args = _FAST_CASES[case]
    machine = load_machine(overrides=[f"prefetch.enabled={str(prefetch).lower()}"])
    module = runner.load_module(text, "k.mlir")
    ref = simulate(module, entry, [a.copy() if hasattr(a, "copy") else a for a in args],
                   machine)  # fmt: skip
    fast = simulate_fast(module, entry, list(args), machine)
    assert json.dumps(fast.report, sort_keys=True) == json.dumps(ref.report, sort_keys=True)
    assert ref.report["levels"]["L1"]["accesses"] + ref.report["levels"]["SPM"]["accesses"] > 0


KERNELS = ROOT / "benchmarks" / "kernels" / "small"


@pytest.mark.parametrize("kernel", ["lstm", "jacobi2d", "softmax_ce"])
@pytest.mark.parametrize(
    "pipeline",
    ["tapeflow-autodiff,tapeflow-lower-tape",
     "tapeflow-autodiff,tapeflow-regions,tapeflow-layers{spm-bytes=4096},tapeflow-stream"],
)  # fmt: skip
def test_fast_path_matches_op_by_op_on_gradients(kernel: str, pipeline: str):
    from xdsl.dialects.builtin import MemRefType
    from xdsl.passes import PassPipeline

    from tapeflow.simulate import simulate_fast
    from tapeflow.registry import get_all_passes, make_context

    path = KERNELS / f"{kernel}.mlir"
    module = runner.load_module(path.read_text(), str(path))
    PassPipeline.parse_spec(get_all_passes(), pipeline).apply(make_context(), module)
    func_op = runner.find_function(module, f"{kernel}_grad")
    scalars = [
        "1.0" for t in func_op.function_type.inputs.data if not isinstance(t, MemRefType)
    ]
    args = runner.make_arguments(func_op, seed=1, scalars=scalars)
    ref = simulate(module, f"{kernel}_grad", [np.copy(a) for a in args])
    fast = simulate_fast(module, f"{kernel}_grad", args)
    assert json.dumps(fast.report, sort_keys=True) == json.dumps(ref.report, sort_keys=True)
    if "stream" in pipeline and kernel == "lstm":  # lstm caches a value per step
        assert ref.report["dma"]["transfers"] > 0


AFFINE = """
func.func @s(%a: memref<1025xf64>, %n: index) -> f64 {
  %z = arith.constant 0.0 : f64
  %r = affine.for %i = 0 to 1024 iter_args(%acc = %z) -> (f64) {
    %v = affine.load %a[%i + 1] : memref<1025xf64>
    %w = affine.load %a[%i] : memref<1025xf64>
    %s = arith.addf %acc, %v : f64
    %t = arith.addf %s, %w : f64
    affine.yield %t : f64
  }
  func.return %r : f64
}
"""


def test_affine_accesses_use_the_map():
    # a[i + 1] and a[i] for i < 1024 touch elements 0..1024: 8200 bytes = lines 0..128.
    data = np.arange(1025.0)
    r = sim(AFFINE, "s", [data, 0], sets=["prefetch.enabled=false"])
    lv = r.report["levels"]["L1"]
    assert lv["accesses"] == 2 * 1024
    assert lv["misses"] == 129
    assert r.report["results"][0]["value"] == float(np.sum(data[1:]) + np.sum(data[:-1]))


def test_tape_bytes_same_before_and_after_lower_tape():
    # The reverse loop here is not the mirrored nest of the AD contract, so the lowering
    # picks its stack layout: one memref<n x f64> (tapeflow.tape) plus a memref<index>
    # stack pointer (tapeflow.tape_meta): n*8 + 8 bytes; the un-lowered cache peaks at n*8.
    from xdsl.passes import PassPipeline

    from tapeflow.registry import get_all_passes, make_context

    n = 300
    module = runner.load_module(TAPE.format(n=n), "k.mlir")
    before = simulate(module, "t", [np.ones(n)])
    PassPipeline.parse_spec(get_all_passes(), "tapeflow-lower-tape").apply(make_context(), module)
    assert not any(op.name.startswith("tape.") for op in module.walk())
    after = simulate(module, "t", [np.ones(n)])
    assert before.report["tape_bytes"] == n * 8
    assert after.report["tape_bytes"] == n * 8 + 8
    assert after.report["results"] == before.report["results"]


def test_dram_presets():
    from tapeflow.hwmodel.config import presets

    pj_per_bit = {"dram-lpddr4": 8, "dram-gddr5": 14, "dram-hbm2": 3.9, "dram-ddr3": 70}
    assert set(pj_per_bit) <= set(presets())
    for name, pj in pj_per_bit.items():
        m = load_machine(name)
        assert m.get("dram", "energy_pj_per_byte") == pytest.approx(pj * 8)
        assert m.get("dram", "bandwidth") == load_machine().get("dram", "bandwidth")
    with pytest.raises(ConfigError, match="no preset of that name"):
        load_machine("dram-sram")


def test_leakage_is_on_by_default_and_scales_with_time_and_capacity():
    n = 1024
    off = sim(stream_kernel(n=n), "sum", [np.ones(n)], sets=["leakage.sram_mw_per_kib=0"])
    assert off.report["energy"]["components_pj"]["leakage"] == 0.0
    on = sim(stream_kernel(n=n), "sum", [np.ones(n)])
    rate = load_machine().get("leakage", "sram_mw_per_kib")
    assert rate > 0  # on by default: SRAM capacity costs energy
    kib = (32768 + 1048576) / 1024  # L1 + L2: the program uses no scratchpad, pays for none
    assert on.report["sram"]["on_chip_bytes"] == kib * 1024
    ns = on.report["cycles"] / 2.0
    e = on.report["energy"]
    assert e["components_pj"]["leakage"] == pytest.approx(rate * kib * ns)  # mW * ns = pJ
    assert sum(e["components_pj"].values()) == pytest.approx(e["total_pj"])
    assert e["on_chip_pj"] - off.report["energy"]["on_chip_pj"] == pytest.approx(
        e["components_pj"]["leakage"]
    )


def test_leakage_counts_the_scratchpad_only_where_the_program_uses_it():
    """A design pays leakage on its own SRAM: the scratchpad's capacity is in it once the
    program stages data there (as `sram.on_chip_bytes` counts it), not otherwise."""
    m = load_machine()
    r = sim(DMA.format(k=64, work=0), "dma", [1.0])
    own = m.l1.size + m.l2.size + m.spm_size
    assert r.report["sram"]["on_chip_bytes"] == own
    ns = r.report["cycles"] / m.get("core", "clock_ghz")
    assert r.report["energy"]["components_pj"]["leakage"] == pytest.approx(
        m.get("leakage", "sram_mw_per_kib") * own / 1024 * ns)


@pytest.mark.parametrize("preset", [None, "accel-salam"])
def test_leakage_rate_is_the_stored_cacti_figure_at_the_presets_capacities(preset):
    """The preset's mW per KiB is CACTI 7's 45 nm itrs-hp leakage (the stored output of
    benchmarks/cacti_leakage.py), summed over its L1, L2 and scratchpad capacities and
    divided by their KiB, to the two digits the .toml gives: changing a capacity or the
    rate without regenerating from CACTI fails here."""
    import csv

    path = ROOT / "benchmarks" / "cacti_leakage_45nm.csv"
    lines = [x for x in path.read_text().splitlines() if not x.startswith("#")]
    mw = {int(r["kib"]): float(r["leak_mw"]) for r in csv.DictReader(lines)
          if r["cell"] == "itrs-hp"}  # fmt: skip
    m = load_machine(preset) if preset else load_machine()
    kib = [s // 1024 for s in (m.get("l1", "size"), m.get("l2", "size"), m.spm_size) if s]
    rate = sum(mw[k] for k in kib) / sum(kib)
    assert m.get("leakage", "sram_mw_per_kib") == pytest.approx(rate, abs=0.005)


def test_python_and_numba_backends_give_the_same_report():
    from tapeflow.hwmodel.cache import numba_available

    if not numba_available():
        pytest.skip("numba is not installed (extra 'fast')")
    n = 3000
    text = TAPE.format(n=n)
    reports = [
        sim(text, "t", [np.linspace(-1, 1, n)], sets=["l1.size=4096"], backend=b).report
        for b in ("python", "numba")
    ]
    assert json.dumps(reports[0], sort_keys=True) == json.dumps(reports[1], sort_keys=True)
    assert reports[0]["levels"]["L1"]["writebacks"] > 0


# A tape of 4-field records in DRAM, written by a forward sweep and read back by a reverse
# sweep, against the same values in four arrays (struct of arrays). On a real core each
# field is its own load/store instruction, so the stride prefetcher sees one stream per
# field with a constant stride of one record (32 B) forward, then -32 B in reverse.
RECORD_SWEEP = """
func.func @rec(%x: f64) -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {n} : index
  %nm1 = arith.constant {nm1} : index
  %z = arith.constant 0.0 : f64
  %t = region.alloc count = {n} : !region.tape<!region.record<f64, f64, f64, f64>>
  scf.for %i = %c0 to %n step %c1 {{
    %a = arith.addf %x, %x : f64
    %b = arith.mulf %x, %x : f64
    %c = arith.subf %x, %a : f64
    %d = arith.mulf %b, %x : f64
    region.write %t[%i], %a, %b, %c, %d : !region.tape<!region.record<f64, f64, f64, f64>>
  }}
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {{
    %j = arith.subi %nm1, %k : index
    %a, %b, %c, %d = region.read %t[%j] : !region.tape<!region.record<f64, f64, f64, f64>>
    %s1 = arith.addf %a, %b : f64
    %s2 = arith.addf %c, %d : f64
    %s3 = arith.addf %s1, %s2 : f64
    %s = arith.addf %acc, %s3 : f64
    scf.yield %s : f64
  }}
  region.dealloc %t : !region.tape<!region.record<f64, f64, f64, f64>>
  func.return %r : f64
}}
"""

SOA_SWEEP = """
func.func @soa(%x: f64) -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {n} : index
  %nm1 = arith.constant {nm1} : index
  %z = arith.constant 0.0 : f64
  %ta = memref.alloc() : memref<{n}xf64>
  %tb = memref.alloc() : memref<{n}xf64>
  %tc = memref.alloc() : memref<{n}xf64>
  %td = memref.alloc() : memref<{n}xf64>
  scf.for %i = %c0 to %n step %c1 {{
    %a = arith.addf %x, %x : f64
    %b = arith.mulf %x, %x : f64
    %c = arith.subf %x, %a : f64
    %d = arith.mulf %b, %x : f64
    memref.store %a, %ta[%i] : memref<{n}xf64>
    memref.store %b, %tb[%i] : memref<{n}xf64>
    memref.store %c, %tc[%i] : memref<{n}xf64>
    memref.store %d, %td[%i] : memref<{n}xf64>
  }}
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {{
    %j = arith.subi %nm1, %k : index
    %a = memref.load %ta[%j] : memref<{n}xf64>
    %b = memref.load %tb[%j] : memref<{n}xf64>
    %c = memref.load %tc[%j] : memref<{n}xf64>
    %d = memref.load %td[%j] : memref<{n}xf64>
    %s1 = arith.addf %a, %b : f64
    %s2 = arith.addf %c, %d : f64
    %s3 = arith.addf %s1, %s2 : f64
    %s = arith.addf %acc, %s3 : f64
    scf.yield %s : f64
  }}
  memref.dealloc %ta : memref<{n}xf64>
  memref.dealloc %tb : memref<{n}xf64>
  memref.dealloc %tc : memref<{n}xf64>
  memref.dealloc %td : memref<{n}xf64>
  func.return %r : f64
}}
"""


@pytest.mark.parametrize("path", ["interp", "fast"])
def test_record_tape_sweeps_are_prefetched_like_struct_of_arrays(path: str):
    # 4096 records of 32 B = 128 KiB, 8x a 16 KiB L2: the reverse sweep misses in both
    # levels unless prefetched. Without the prefetcher: 2048 lines written (write-allocate
    # misses), then 2048 lines read back, of which the last 64 written (4 KiB of L1, LRU)
    # still hit: 4096 - 64 L1 misses for either layout (the four arrays are 32 KiB apart,
    # so their last 16 lines each fill the 16 sets x 4 ways the same way).
    n = 4096
    sets = ["l1.size=4096", "l1.assoc=4", "l2.size=16384", "l2.assoc=8"]
    fmt = {"n": n, "nm1": n - 1}
    lines = n * 32 // LINE

    def run(text: str, entry: str, extra: list[str]) -> dict:
        module = runner.load_module(text.format(**fmt), "k.mlir")
        machine = load_machine(overrides=[*sets, *extra])
        if path == "fast":
            from tapeflow.simulate import simulate_fast

            return simulate_fast(module, entry, [0.5], machine).report
        return simulate(module, entry, [0.5], machine).report

    rec_off = run(RECORD_SWEEP, "rec", ["prefetch.enabled=false"])
    soa_off = run(SOA_SWEEP, "soa", ["prefetch.enabled=false"])
    assert rec_off["levels"]["L1"]["misses"] == 2 * lines - 4096 // LINE
    assert soa_off["levels"]["L1"]["misses"] == 2 * lines - 4096 // LINE
    assert rec_off["results"] == soa_off["results"]
    rec = run(RECORD_SWEEP, "rec", [])
    soa = run(SOA_SWEEP, "soa", [])
    # Each field's stream trains after `threshold` + 1 accesses and then runs ahead,
    # stopping at 4 KiB page ends: about one miss per page and sweep direction (a page
    # holds 128 records; 32 pages, so at most ~64 + a few misses either way).
    for r in (rec, soa):
        assert r["levels"]["L1"]["misses"] <= 2 * (n * 32 // 4096) + 8
        assert r["dram"]["demand_lines_read"] <= 2 * (n * 32 // 4096) + 8
    assert abs(rec["levels"]["L1"]["misses"] - soa["levels"]["L1"]["misses"]) <= 8
