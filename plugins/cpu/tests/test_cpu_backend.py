"""The installed plugin: discovery and health, the backend order and fallback, capabilities as
data, and the thread setting."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from mskernel.cli import main
from mskernel import bool_, float32, int32
from mskernel.hooks.host import host
from mskernel.ir.dtypes import ALL_DTYPES
from mskernel.runtime import FallbackWarning
from mskernel_sdk import GraphBuilder, compile_graph, op_registry, tensor_type

import mskernel_cpu
from mskernel_cpu.fusion_codegen import ISA_ENV, target_isa
from mskernel_cpu.native import BLAS_CORETYPE_ENV, BLAS_OVERRIDES, load


def test_plugins_list_shows_cpu_ok(capsys):
    assert main(["plugins", "list"]) == 0
    header, *lines = capsys.readouterr().out.splitlines()
    (row,) = [line for line in lines if line.startswith("cpu ")]
    assert row.split()[:4] == ["cpu", "mskernel-cpu", mskernel_cpu.__version__, "backend"]
    # the status column, not the last: a reason column follows when another installed plugin
    # (a gpu backend on a machine without a GPU) is unavailable
    assert row[header.index("status"):].split()[0] == "ok"


def test_plugins_info_lists_the_core_ops_that_fall_back(capsys):
    assert main(["plugins", "info", "cpu"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "'cpu', priority 100, available" in text
    claimed = set(host().backends.get("cpu").capabilities().ops)
    assert f"claims: {len(claimed)} ops" in text
    falls_back = sorted(op.name for op in op_registry() if op.owner == "mskernel"
                        and op.name not in claimed)
    assert falls_back == []  # every core op has a kernel
    assert "falls back: none: every core op runs here" in text


def test_cpu_is_preferred_and_unclaimed_ops_fall_back_with_a_warning(cpu, foreign_op):
    assert host().backends.order().index("cpu") < host().backends.order().index("reference")
    b = GraphBuilder("mixed")
    x = b.input(tensor_type("f32", (3, 4)), "x")
    e = b.op("exp", x)
    graph = b.build([b.op("mul", b.op(foreign_op, e, axis=1), e)])
    with pytest.warns(FallbackWarning, match=rf"backend 'cpu' cannot run 1 node.*'{foreign_op}'"):
        compiled = compile_graph(graph)
    assert [s.backend for s in compiled.plan.segments] == ["cpu", "reference", "cpu"]
    x_host = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    (got,) = compiled(x_host)
    np.testing.assert_allclose(got, np.cumsum(np.exp(x_host), axis=1) * np.exp(x_host),
                               rtol=1e-6)


def test_capabilities_are_the_registered_kernels_and_the_plan_ops(cpu):
    caps = cpu.capabilities()
    kernels = dict(load().kernel_table())
    plan_ops = {"If", "While", "ref_load", "ref_store", "constant", "reshape", "squeeze",
                "expand_dims"}
    assert set(caps.ops) == set(kernels) | plan_ops
    assert {"add", "matmul", "sum", "mean", "max", "min", "cast", "where"} <= set(caps.ops)
    assert caps.ops["exp"].dtypes == {dt for dt in ALL_DTYPES if dt.is_inexact}
    assert caps.ops["less"].dtypes == {dt for dt in ALL_DTYPES if dt.kind in "iufb"}
    assert caps.ops["cast"].dtypes == set(ALL_DTYPES)
    assert caps.ops["While"].dtypes is None
    assert bool_ not in caps.ops["add"].dtypes and int32 in caps.ops["add"].dtypes
    assert float32 in caps.ops["matmul"].dtypes


def test_availability_reports_threads_and_blas(cpu):
    availability = cpu.availability()
    assert availability.available
    assert f"{mskernel_cpu.get_num_threads()} thread(s)" in availability.reason
    assert "OpenBLAS" in availability.reason
    assert f"{target_isa()} generated kernels" in availability.reason


def test_set_num_threads_changes_the_pool_and_rejects_zero():
    before = mskernel_cpu.get_num_threads()
    try:
        mskernel_cpu.set_num_threads(1)
        assert mskernel_cpu.get_num_threads() == 1
        mskernel_cpu.set_num_threads(3)
        assert mskernel_cpu.get_num_threads() == 3
        with pytest.raises(ValueError, match="at least 1"):
            mskernel_cpu.set_num_threads(0)
    finally:
        mskernel_cpu.set_num_threads(before)


@pytest.mark.parametrize("value,expected", [("1", 1), ("3", 3), ("", None), ("zero", None)])
def test_threads_come_from_the_environment(value, expected):
    env = dict(os.environ, MSKERNEL_NUM_THREADS=value)
    script = "import mskernel_cpu; print(mskernel_cpu.get_num_threads())"
    result = subprocess.run([sys.executable, "-c", script], env=env,
                            capture_output=True, text=True, check=True)
    default = len(os.sched_getaffinity(0))
    assert int(result.stdout) == (expected or default)
    if value == "zero":
        assert "MSKERNEL_NUM_THREADS='zero' is not a positive integer" in result.stderr


def blas_family(**variables: str) -> str:
    """The OpenBLAS kernel family a fresh process loads with ``variables`` set (and none of
    the BLAS variables of this environment)."""
    env = {k: v for k, v in os.environ.items()
           if k not in (*BLAS_OVERRIDES, BLAS_CORETYPE_ENV)} | variables
    script = ("import os, mskernel_cpu.native as n; print(n.load().blas_info()); "
              "print(os.environ.get('OPENBLAS_CORETYPE'), os.environ.get('OPENBLAS_L2_SIZE'))")
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                            text=True, timeout=120, check=True)
    info, restored = result.stdout.splitlines()
    assert restored == f"{variables.get('OPENBLAS_CORETYPE')} {variables.get('OPENBLAS_L2_SIZE')}"
    return info.rsplit("(", 1)[1].rstrip(")").lower()


def test_openblas_picks_its_own_kernel_whatever_openblas_coretype_says():
    own = blas_family()
    assert blas_family(OPENBLAS_CORETYPE="Sandybridge", OPENBLAS_L2_SIZE="65536") == own
    assert blas_family(**{BLAS_CORETYPE_ENV: "Sandybridge"}) == "sandybridge"


@pytest.mark.parametrize("wanted", ["", "x86-64-v3", "x86-64-v4"])
def test_generated_kernels_target_the_cpus_instruction_set(wanted):
    """x86-64-v4 where the CPU has AVX-512 unless the baseline is asked for; never beyond
    what the CPU runs (a fused step's result is the same either way)."""
    script = ("import numpy as np, mskernel, mskernel_cpu._cpu_features as f; "
              "from mskernel_cpu.fusion_codegen import target_isa; "
              "x = mskernel.Tensor(np.linspace(-3, 3, 1000, dtype=np.float32)); "
              "y = mskernel.jit(lambda x: mskernel.ops.exp(x * 0.5 + 1.0) - x)(x); "
              "print(target_isa(), f.has_x86_64_v4(), float(y.numpy().astype(np.float64).sum()))")
    env = dict(os.environ, **{ISA_ENV: wanted})
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                            text=True, timeout=300, check=True)
    isa, v4, total = result.stdout.split()
    expected = "x86-64-v4" if v4 == "True" and wanted != "x86-64-v3" else "x86-64-v3"
    assert isa == expected
    x = np.linspace(-3, 3, 1000, dtype=np.float32).astype(np.float64)
    assert float(total) == pytest.approx(float((np.exp(x * 0.5 + 1.0) - x).sum()), rel=1e-5)


def test_a_cpu_without_the_kernels_instruction_set_leaves_the_reference_backend():
    script = """
import numpy as np
import mskernel_cpu._cpu_features as probe
probe.missing_features = lambda: ["avx2", "fma"]  # as on a CPU older than x86-64-v3
from mskernel.hooks.host import host
from mskernel.ir import GraphBuilder, tensor_type
from mskernel.runtime import compile_graph
record = host().record("cpu")
print(record.status, "|", record.reason)
b = GraphBuilder("g")
x = b.input(tensor_type("f32", (2,)))
compiled = compile_graph(b.build([b.op("exp", x)]))
print([s.backend for s in compiled.plan.segments], compiled(np.zeros(2, np.float32))[0])
"""
    result = subprocess.run([sys.executable, "-W", "error", "-c", script], capture_output=True,
                            text=True, check=True)
    status, plan = result.stdout.splitlines()
    assert status == ("unavailable | backend 'cpu': this CPU lacks avx2, fma, which the kernels "
                      "were compiled for")
    assert plan == "['reference'] [1. 1.]"


def test_share_wraps_only_arrays_already_in_device_storage():
    host().load_external()
    cpu = host().backends.get("cpu")
    f32 = tensor_type("f32", (4,))
    aligned = load().aligned_empty(np.float32, (4,))
    aligned[:] = [1, 2, 3, 4]
    shared = cpu.share(aligned, f32)
    assert shared is not None and shared.data is aligned
    b = GraphBuilder("g")
    x = b.input(f32)
    (doubled,) = compile_graph(b.build([b.op("add", x, x)]), backends=["cpu"]).run([shared])
    np.testing.assert_array_equal(doubled.to_host(), [2, 4, 6, 8])
    raw = load().aligned_empty(np.uint8, (80,))
    off_by_four = raw[4:20].view(np.float32)  # contiguous, but 4 bytes past a 64-byte line
    strided = load().aligned_empty(np.float32, (8,))[::2]
    assert cpu.share(off_by_four, f32) is None and cpu.share(strided, f32) is None
    assert cpu.share(aligned, tensor_type("f64", (4,))) is None  # not its storage dtype
    assert cpu.share(aligned, tensor_type("bf16", (4,))) is None  # stored as 2-byte patterns
