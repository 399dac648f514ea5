"""ref_load and ref_store: effects ordered by tokens, copies in and out of cells, typing errors."""

import re

import numpy as np
import pytest

from mskernel.errors import OpError
from mskernel.ir import TOKEN, GraphBuilder, RefType, tensor_type
from mskernel.ops import op_registry
from mskernel.runtime.interpreter import run_graph
from mskernel.runtime.reference import ReferenceBackend
from mskernel.runtime.backend import CompileOptions
from mskernel.runtime.state import TOKEN_VALUE, RefCell

F23 = tensor_type("f32", (2, 3))


def double_in_place():
    """(ref, token) -> (old value, new value, final token): load, store 2x, load again."""
    b = GraphBuilder("double")
    ref, token = b.input(RefType(F23), "w"), b.input(TOKEN)
    old, token = b.op("ref_load", ref, token)
    token = b.op("ref_store", ref, b.op("add", old, old), token)
    new, token = b.op("ref_load", ref, token)
    return b.build([old, new, token])


def test_store_then_load_sees_the_stored_value():
    start = np.arange(6, dtype=np.float32).reshape(2, 3)
    cell = RefCell(F23, start.copy())
    old, new, token = run_graph(double_in_place(), [cell, TOKEN_VALUE])
    np.testing.assert_array_equal(old, start)
    np.testing.assert_array_equal(new, 2 * start)
    np.testing.assert_array_equal(cell.value, 2 * start)
    assert token is TOKEN_VALUE


def test_loaded_values_and_stored_values_are_copies():
    cell = RefCell(F23, np.ones((2, 3), np.float32))
    old, new, _ = run_graph(double_in_place(), [cell, TOKEN_VALUE])
    new[0, 0] = 100.0  # the caller changing an output does not change the cell
    assert cell.value[0, 0] == 2.0
    assert old[0, 0] == 1.0


def test_the_reference_backend_writes_back_to_device_cells():
    backend = ReferenceBackend()
    exe = backend.compile(double_in_place(), CompileOptions())
    cell = RefCell(F23, backend.to_device(np.full((2, 3), 3.0, np.float32), F23))
    old, new, _ = exe.run([cell, TOKEN_VALUE])
    np.testing.assert_array_equal(old.to_host(), 3.0)
    np.testing.assert_array_equal(cell.value.to_host(), 6.0)


def test_store_requires_exactly_the_refs_type():
    b = GraphBuilder()
    ref, token = b.input(RefType(F23)), b.input(TOKEN)
    for bad in (tensor_type("f64", (2, 3)), tensor_type("f32", (3, 2)), tensor_type("f32", (3,))):
        message = f": value has type {bad}, but the ref holds f32[2,3]"
        with pytest.raises(OpError, match="op 'ref_store' at .+" + re.escape(message)):
            b.op("ref_store", ref, b.input(bad), token)


def test_state_ops_require_a_ref_and_a_token():
    b = GraphBuilder()
    ref, token, x = b.input(RefType(F23)), b.input(TOKEN), b.input(F23)
    with pytest.raises(OpError, match=r"op 'ref_load' at .+: ref must be a !ref<T>, got f32\[2,3\]"):
        b.op("ref_load", x, token)
    with pytest.raises(OpError, match=r"op 'ref_load' at .+: token must be a !token, got f32\[2,3\]"):
        b.op("ref_load", ref, x)
    with pytest.raises(OpError, match=r"op 'ref_store' at .+: token must be a !token, got "
                                      r"!ref<f32\[2,3\]>"):
        b.op("ref_store", ref, x, ref)


def test_load_returns_the_value_type_and_a_new_token():
    b = GraphBuilder()
    value, token = b.op("ref_load", b.input(RefType(F23)), b.input(TOKEN))
    assert value.type == F23 and token.type == TOKEN


def test_state_ops_are_effectful():
    for name in ("ref_load", "ref_store"):
        assert op_registry().get(name).effectful
