"""The program's memory plan (lifetimes, release after the last read, in-place reuse) and the
on-disk cache of compiled kernels (private, atomic, verified before use)."""

from __future__ import annotations

import contextlib
import os
import stat

import numpy as np
import pytest

from mskernel.hooks.host import host
from mskernel_sdk import GraphBuilder, run_reference, tensor_type

from mskernel_gpu.executable import Program
from mskernel_gpu.kernels import host_lib
from mskernel_gpu.nvrtc import KernelCache


@pytest.fixture(autouse=True)
def plugins():
    host().load_external()


def chain():
    b = GraphBuilder("chain")
    x = b.input(tensor_type("f32", (64, 32)), "x")
    e = b.op("exp", x)
    n = b.op("neg", e)
    s = b.op("add", n, x)
    return b.build([b.op("mul", s, s), e])


def test_intermediates_are_released_after_their_last_read_and_reused_in_place():
    graph = chain()
    program = Program(graph, host_lib())
    ops = [s.node.op for s in program.steps]
    assert ops == ["exp", "neg", "add", "mul"]
    exp, neg, add, mul = program.steps
    assert neg.in_place is None  # exp's result is a graph output: never overwritten
    assert add.in_place == neg.writes[0]  # neg's result dies at add, which writes over it
    assert mul.in_place is None  # add's result is read twice by mul
    assert add.writes[0] in mul.frees
    plan = program.memory_plan()
    text = str(plan)
    assert "peak" in text and "in place: step 2 (add)" in text
    assert plan.naive_bytes == 4 * 64 * 32 * 4
    assert plan.peak_bytes <= 3 * 64 * 32 * 4  # e, and at most two temporaries at once
    x = np.linspace(-1, 1, 64 * 32, dtype=np.float32).reshape(64, 32)
    for got, want in zip(program.run([x.copy()]), run_reference(graph, [x])):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_inputs_and_views_are_never_written_over():
    b = GraphBuilder("views")
    x = b.input(tensor_type("f32", (4, 6)), "x")
    r = b.op("reshape", b.op("exp", x), shape=(6, 4))
    graph = b.build([b.op("neg", r), b.op("neg", x)])
    program = Program(graph, host_lib())
    assert all(s.in_place is None for s in program.steps)


def test_programs_with_host_reads_are_not_captured_as_cuda_graphs():
    b = GraphBuilder("division")
    x, y = (b.input(tensor_type("i32", (3,)), n) for n in "xy")
    graph = b.build([b.op("floor_divide", x, y)])
    assert not Program(graph, host_lib()).capturable
    assert Program(chain(), host_lib()).capturable


SOURCE = 'extern "C" __global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }'


def test_kernels_are_cached_privately_and_atomically(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = KernelCache()
    ptx = cache.compiled(SOURCE, "k")
    assert b".entry k(" in ptx
    directory = tmp_path / "mskernel" / "gpu-kernels"
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    (entry,) = directory.iterdir()
    assert entry.name == f"{cache.key(SOURCE, 'compute_80')}.bin"
    assert stat.S_IMODE(os.stat(entry).st_mode) == 0o600
    assert cache.compiled(SOURCE, "k") == ptx  # read back, verified


def test_a_tampered_kernel_is_compiled_again(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = KernelCache()
    ptx = cache.compiled(SOURCE, "k")
    (entry,) = (tmp_path / "mskernel" / "gpu-kernels").iterdir()
    digest, _, body = entry.read_bytes().partition(b"\n")
    entry.write_bytes(digest + b"\n" + body + b"\n.global .u32 planted;\n")
    with pytest.warns(RuntimeWarning, match="does not match its digest"):
        assert cache.compiled(SOURCE, "k") == ptx


def test_a_cache_others_can_write_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    directory = tmp_path / "mskernel" / "gpu-kernels"
    directory.mkdir(parents=True)
    directory.chmod(0o777)
    with pytest.warns(RuntimeWarning, match="writable by others"):
        cache = KernelCache()
    assert b".entry k(" in cache.compiled(SOURCE, "k")
    assert not list(directory.iterdir())


class RecordingStream:
    """Stands in for a CUDA stream: what CuPy's capture API is called with, and a graph whose
    replay re-runs what was captured on the same buffers (as a CUDA graph replays its kernels
    on the addresses it captured)."""

    def __init__(self):
        self.capturing = False
        self.launches = 0

    def begin_capture(self):
        self.capturing = True

    def end_capture(self):
        self.capturing = False
        return self

    def launch(self, stream):
        self.launches += 1
        self.replay()


def test_replays_copy_cells_in_and_stored_values_out():
    """The buffer choreography of a captured program with a ref cell: each replay reads the
    cell's current value and hands the cell a new array with the value stored."""
    from types import SimpleNamespace

    from mskernel_sdk import DeviceArray, RefCell, TOKEN_VALUE, RefType, TokenType

    from mskernel_gpu.executable import GpuExecutable

    t = tensor_type("f32", (3,))
    b = GraphBuilder("accumulate")
    x = b.input(t, "x")
    cell = b.input(RefType(t), "w")
    token = b.input(TokenType(), "token")
    w, token = b.op("ref_load", cell, token)
    new = b.op("add", w, x)
    for _ in range(3):  # enough launches for a replay to pay for its copies
        new = b.op("neg", b.op("neg", new))
    token = b.op("ref_store", cell, new, token)
    graph = b.build([new, token])

    stream = RecordingStream()
    pools = []

    @contextlib.contextmanager
    def using_allocator(malloc):  # CuPy's: allocations inside come from ``malloc``
        pools.append(malloc)
        yield

    cuda = SimpleNamespace(MemoryPool=lambda: SimpleNamespace(malloc=object()),
                           using_allocator=using_allocator)
    cupy = SimpleNamespace(copyto=np.copyto, cuda=cuda)
    backend = SimpleNamespace(device=SimpleNamespace(cupy=cupy, stream=lambda: stream),
                              last_event=None)
    program = Program(graph, host_lib())
    executable = GpuExecutable(backend, graph, graph, program, graphs=True)
    assert executable._use_graph

    def replay():  # the captured kernels, rerun on the captured buffers
        _, statics, captured_outputs, _ = executable._captured
        captured_outputs[0][...] = statics[1].loaded + statics[0]
        statics[1].value.data[...] = captured_outputs[0]

    stream.replay = replay
    real = RefCell(t, DeviceArray(backend, t, np.zeros(3, np.float32)))
    ones = np.ones(3, np.float32)
    outputs = executable._replay([ones, real, TOKEN_VALUE])  # captures, then replays
    np.testing.assert_array_equal(outputs[0], [1, 1, 1])
    np.testing.assert_array_equal(real.value.data, [1, 1, 1])
    before = real.value.data
    outputs = executable._replay([2 * ones, real, TOKEN_VALUE])
    np.testing.assert_array_equal(outputs[0], [3, 3, 3])
    np.testing.assert_array_equal(real.value.data, [3, 3, 3])
    np.testing.assert_array_equal(before, [1, 1, 1])  # a new array: the old one is untouched
    assert outputs[1] is TOKEN_VALUE and stream.launches == 2
    assert len(pools) == 1  # the capture allocated from a pool of its own, once
    assert executable.capture_error == ""
