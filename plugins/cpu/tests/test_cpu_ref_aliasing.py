"""Refs without copies: a ``ref_load`` reads the cell's array in place, and a ``ref_store``
puts a new DeviceArray in the cell whose array is one the step made before when nothing
references that one anymore (arrays read from the cell earlier never change)."""

from __future__ import annotations

import numpy as np

from mskernel.ir.types import TOKEN
from mskernel_sdk import (
    CompileOptions, GraphBuilder, RefCell, RefType, TOKEN_VALUE, compile_graph, run_reference,
    tensor_type,
)

CELL = tensor_type("f32", (6, 5))
ALIAS = "[aliases the cell's array]"
TAKEN = "[its value was computed in the cell's new array]"


def compile_at(graph, opt_level=2):
    (executable,) = compile_graph(
        graph, backends=["cpu"],
        options=CompileOptions(opt_level=opt_level, fallback="deny", debug=True)).executables
    return executable


def new_cell(cpu, seed=0):
    host = np.random.default_rng(seed).uniform(0.5, 1.5, CELL.shape).astype(np.float32)
    return RefCell(CELL, cpu.to_device(host, CELL)), host


def load_lines(executable):
    return [line for line in executable.describe().splitlines() if "'ref_load'" in line]


def store_lines(executable):
    return [line for line in executable.describe().splitlines() if "'ref_store'" in line]


def update_graph():
    """y = v * 2 + 1 of the loaded v, stored back; the loss-like sum of y returned."""
    b = GraphBuilder("update")
    ref, token = b.input(RefType(CELL)), b.input(TOKEN)
    v, token = b.op("ref_load", ref, token)
    y = b.op("add", b.op("mul", v, v), v)
    token = b.op("ref_store", ref, y, token)
    return b.build([b.op("sum", y), token])


def test_a_load_dead_before_the_store_reads_the_cell_in_place(cpu):
    graph = update_graph()
    compiled = compile_at(graph)
    assert all(ALIAS in line for line in load_lines(compiled))
    assert all(TAKEN in line for line in store_lines(compiled))
    assert "acquire the array its store puts in the cell" in compiled.describe()
    cell, host = new_cell(cpu)
    want = host * host + host
    total, _ = compiled.run([cell, TOKEN_VALUE])
    np.testing.assert_allclose(cell.value.to_host(), want, rtol=1e-6)
    np.testing.assert_allclose(total.to_host(), want.sum(), rtol=1e-5)
    # the reference and the unoptimised plan agree
    expected = run_reference(graph, [RefCell(CELL, host.copy()), TOKEN_VALUE])
    np.testing.assert_allclose(total.to_host(), expected[0], rtol=1e-5)
    plain_cell, _ = new_cell(cpu)
    compile_at(graph, 0).run([plain_cell, TOKEN_VALUE])
    np.testing.assert_allclose(plain_cell.value.to_host(), want, rtol=1e-6)


def test_a_store_recycles_its_arrays_once_nothing_references_them(cpu):
    compiled = compile_at(update_graph())
    cell, _ = new_cell(cpu)
    compiled.run([cell, TOKEN_VALUE])
    first = cell.value  # held here: never written over
    before = first.to_host().copy()
    compiled.run([cell, TOKEN_VALUE])
    second = cell.value
    assert second is not first
    np.testing.assert_array_equal(first.to_host(), before)
    np.testing.assert_allclose(second.to_host(), before * before + before, rtol=1e-6)
    addresses = {first.data.ctypes.data, second.data.ctypes.data}
    del first, second
    for _ in range(3):  # the cell's array and a spare, alternating
        compiled.run([cell, TOKEN_VALUE])
        assert cell.value.data.ctypes.data in addresses
    kept = cell.value
    view = kept.data[1:]  # a view keeps its array referenced too
    kept_host = kept.to_host().copy()
    del kept
    for _ in range(2):
        compiled.run([cell, TOKEN_VALUE])
    np.testing.assert_array_equal(view, kept_host[1:])


def test_a_load_live_across_a_store_keeps_the_old_array(cpu):
    b = GraphBuilder("across")
    ref, token = b.input(RefType(CELL)), b.input(TOKEN)
    v, token = b.op("ref_load", ref, token)
    token = b.op("ref_store", ref, b.op("neg", v), token)
    graph = b.build([b.op("add", v, v), token])  # v read after the store
    compiled = compile_at(graph)
    assert all(ALIAS in line for line in load_lines(compiled))
    cell, host = new_cell(cpu)
    for _ in range(3):
        out, _ = compiled.run([cell, TOKEN_VALUE])
        np.testing.assert_array_equal(out.to_host(), host + host)
        host = -host
        np.testing.assert_array_equal(cell.value.to_host(), host)


def test_a_returned_load_is_a_copy(cpu):
    b = GraphBuilder("returned")
    ref, token = b.input(RefType(CELL)), b.input(TOKEN)
    v, token = b.op("ref_load", ref, token)
    graph = b.build([v, b.op("neg", v), token])
    compiled = compile_at(graph)
    assert not any(ALIAS in line for line in load_lines(compiled))
    cell, host = new_cell(cpu)
    out, neg, _ = compiled.run([cell, TOKEN_VALUE])
    assert not np.shares_memory(out.data, cell.value.data)
    np.testing.assert_array_equal(out.to_host(), host)
    np.testing.assert_array_equal(neg.to_host(), -host)


def test_an_aliased_load_is_never_overwritten_in_place(cpu):
    b = GraphBuilder("in_place")
    ref, token = b.input(RefType(CELL)), b.input(TOKEN)
    v, token = b.op("ref_load", ref, token)
    graph = b.build([b.op("sum", b.op("exp", b.op("neg", v))), token])
    compiled = compile_at(graph, 1)  # views on, no fusion: neg could take v's buffer
    assert all(ALIAS in line for line in load_lines(compiled))
    cell, host = new_cell(cpu)
    for _ in range(2):
        total, _ = compiled.run([cell, TOKEN_VALUE])
        np.testing.assert_allclose(total.to_host(), np.exp(-host).sum(), rtol=1e-5)
    np.testing.assert_array_equal(cell.value.to_host(), host)


def test_a_value_stored_twice_or_returned_is_copied_into_the_cells(cpu):
    b = GraphBuilder("twice")
    first, second, token = b.input(RefType(CELL)), b.input(RefType(CELL)), b.input(TOKEN)
    v, token = b.op("ref_load", first, token)
    y = b.op("exp", v)
    token = b.op("ref_store", first, y, token)
    token = b.op("ref_store", second, y, token)
    z = b.op("neg", v)
    token = b.op("ref_store", second, z, token)
    graph = b.build([z, token])  # z stored once but returned
    compiled = compile_at(graph)
    assert not any(TAKEN in line for line in store_lines(compiled))
    (a, host), (c, _) = new_cell(cpu), new_cell(cpu, seed=1)
    for _ in range(2):
        out, _ = compiled.run([a, c, TOKEN_VALUE])
        np.testing.assert_array_equal(out.to_host(), -host)
        np.testing.assert_allclose(a.value.to_host(), np.exp(host), rtol=1e-6)
        np.testing.assert_array_equal(c.value.to_host(), -host)
        assert not np.shares_memory(a.value.data, c.value.data)
        assert not np.shares_memory(out.data, c.value.data)
        host = a.value.to_host()
