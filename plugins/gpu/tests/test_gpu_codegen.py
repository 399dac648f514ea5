"""Code generation without a device: every op the generator fuses, in every dtype it takes,
and every reduction, compiled to PTX by NVRTC (and to cubins for real architectures); the broadcast index arithmetic checked against
NumPy's broadcasting."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from mskernel_sdk import GraphBuilder, core_ops, dtype, tensor_type

from mskernel_gpu.codegen import C_TYPES, FLOATS, FUSABLE, REDUCTIONS, _offset, generate
from mskernel_gpu.nvrtc import CompileError, compile_source


def one_node_region(op, dt, shape=(4, 5)):
    b = GraphBuilder(f"{op}_{dt}")
    opdef = core_ops()[op]
    if op == "where":
        inputs = [b.input(tensor_type("bool", shape), "c"),
                  *(b.input(tensor_type(dt, shape), n) for n in "xy")]
    else:
        arity = len(opdef.inputs)
        inputs = [b.input(tensor_type(dt, shape if i == 0 else shape[-1:]), f"x{i}")
                  for i in range(arity)]
    attrs = {"dtype": dtype("float32" if dt != "float32" else "float16")} if op == "cast" else {}
    return b.build([b.op(op, *inputs, **attrs)])


CASES = sorted((op, dt) for op, dts in FUSABLE.items() for dt in dts)


@pytest.mark.parametrize("op,dt", CASES, ids=[f"{op}-{dt}" for op, dt in CASES])
def test_every_fusable_op_compiles_to_ptx(op, dt):
    region = one_node_region(op, dt)
    generated = generate(region, (4, 5))
    ptx = compile_source(generated.source, generated.name).decode()
    assert f".visible .entry {generated.name}(" in ptx


@pytest.mark.parametrize("reduce,dt", list(itertools.product(REDUCTIONS, sorted(FLOATS))))
def test_every_reduction_compiles_to_ptx(reduce, dt):
    b = GraphBuilder("row")
    x = b.input(tensor_type(dt, (3, 7)), "x")
    m = b.input(tensor_type(dt, (3, 1)), "m")
    region = b.build([b.op("exp", b.op("add", x, b.op("neg", m)))])
    generated = generate(region, (3, 7), reduce, inner=7)
    ptx = compile_source(generated.source, generated.name).decode()
    assert f".visible .entry {generated.name}(" in ptx
    assert "bar.sync" in ptx  # the block combines its partial results in shared memory


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_a_device_gets_a_cubin_of_its_own_architecture(arch):
    generated = generate(one_node_region("exp", "bfloat16"), (4, 5))
    cubin = compile_source(generated.source, generated.name, arch)
    assert cubin[:4] == b"\x7fELF" and generated.name.encode() in cubin


def test_the_kernel_name_is_the_hash_of_its_source():
    a = generate(one_node_region("exp", "float32"), (4, 5))
    b = generate(one_node_region("exp", "float64"), (4, 5))
    assert a.name != b.name and a.name == generate(one_node_region("exp", "float32"), (4, 5)).name
    assert re.fullmatch(r"fused_[0-9a-f]{16}", a.name)


def test_nvrtc_errors_carry_the_log_and_the_source():
    with pytest.raises(CompileError, match="undefined|identifier") as info:
        compile_source('extern "C" __global__ void k() { nonsense(); }', "k")
    assert "--- source ---" in str(info.value)


def test_half_and_bfloat16_round_after_every_op():
    source = generate(one_node_region("exp", "bfloat16"), (4, 5)).source
    assert "b2f(f2b(expf(" in source
    source = generate(one_node_region("add", "float16"), (4, 5)).source
    assert "h2f(f2h((r0 + r1)))" in source


@pytest.mark.parametrize("shape,domain", [
    ((1,), (3, 4)), ((4,), (3, 4)), ((3, 1), (3, 4)), ((2, 1, 5), (2, 3, 5)),
    ((1, 3, 1), (2, 3, 4)), ((), (2, 2)), ((2, 3, 4), (2, 3, 4)),
])
def test_broadcast_offsets_match_numpy(shape, domain):
    expr = _offset(shape, domain, "i")
    python = expr.replace("LL", "").replace("/", "//")
    source = np.arange(int(np.prod(shape))).reshape(shape)
    expected = np.broadcast_to(source, domain).ravel()
    got = [eval(python, {"i": i}) for i in range(int(np.prod(domain)))]  # noqa: S307
    assert got == expected.tolist()


def test_every_c_type_is_a_storage_of_a_core_dtype():
    for name in C_TYPES:
        assert dtype(name).name == name
