"""The offline-model path up to the NPU: the ONNX ATC is given (checked by ONNX Runtime
against the reference backend), the ATC command lines, ATC's failures, and ACL's calls in
the order CANN documents them (against a recording stand-in for pyACL, since no NPU is
here: the real module is never faked into availability)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from mskernel_sdk import assert_close, dtype, run_reference

from mskernel_ascend.acl import AclError, AclModel
from mskernel_ascend.offline import AtcCommand, AtcError, export_onnx, input_shapes, onnx_graph

from .conftest import arguments, conv_net


def test_the_onnx_for_atc_holds_the_fused_ops_and_agrees_with_the_reference(
        tmp_path: Path) -> None:
    graph = conv_net()
    fused = onnx_graph(graph)
    assert {n.op for n in fused.nodes} >= {"ascend.conv2d", "ascend.matmul_bias"}
    path = export_onnx(fused, tmp_path / "net.onnx")
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("Conv") == 2 and ops.count("Relu") == 2 and "Gemm" in ops
    assert model.opset_import[0].version == 13
    args = arguments(graph)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    (got,) = session.run(None, dict(zip(names, args)))
    assert_close(got, run_reference(graph, args)[0], dtype("f32"), rtol=1e-4)


def test_atc_command_lines(tmp_path: Path) -> None:
    graph = conv_net()
    names = [v.name for v in graph.inputs]
    command = AtcCommand(tmp_path / "net.onnx", tmp_path / "net", "Ascend910B1",
                         "allow_mix_precision", input_shapes(graph, names), atc="/opt/atc")
    assert command.argv() == [
        "/opt/atc", "--framework=5", f"--model={tmp_path / 'net.onnx'}",
        f"--output={tmp_path / 'net'}", "--soc_version=Ascend910B1",
        "--precision_mode=allow_mix_precision", "--input_format=NCHW",
        "--input_shape=x:2,3,8,8;w1:5,3,3,3;b1:5;w2:4,5,3,3;wd:144,10;bd:10", "--log=error"]
    assert command.om_path == tmp_path / "net.om"
    flat = AtcCommand(Path("m.onnx"), Path("m"), "Ascend310P3", "force_fp16",
                      (("tokens", (4, 16)),))
    assert "--input_format=ND" in flat.argv() and flat.argv()[0] == "atc"


def test_atc_failures_are_clear(tmp_path: Path) -> None:
    command = AtcCommand(tmp_path / "m.onnx", tmp_path / "m", "Ascend910B1", "force_fp16", (),
                         atc=str(tmp_path / "missing-atc"))
    with pytest.raises(AtcError, match="is not installed: it comes with the CANN toolkit"):
        command.run()
    failing = tmp_path / "atc"
    failing.write_text("#!/bin/sh\necho 'E10001: Value [Ascend000] for --soc_version is "
                       "invalid' >&2\nexit 1\n")
    failing.chmod(0o755)
    command = AtcCommand(tmp_path / "m.onnx", tmp_path / "m", "Ascend000", "force_fp16", (),
                         atc=str(failing))
    with pytest.raises(AtcError, match=r"(?s)exit code 1.*--soc_version=Ascend000.*E10001"):
        command.run()


class RecordingAcl:
    """pyACL's call surface, recording each call; ``fail`` makes one call return an error
    code.  Device and pinned host memory are bytearrays; the "model" doubles its float32
    input.  ``modern``: the pointer helpers of CANN 6 and later (``bytes_to_ptr``,
    ``ptr_to_bytes``, with ``acl.rt.malloc_host``), else the older ``numpy_to_ptr``."""

    def __init__(self, fail: str = "", modern: bool = True) -> None:
        self.calls: list[str] = []
        self.fail = fail
        self.memory: dict[int, bytearray] = {}
        self.datasets: dict[int, list[Any]] = {}
        self.rt, self.mdl, self.util = self._Ns(), self._Ns(), self._Ns()
        for name in ("set_device", "reset_device", "create_context", "destroy_context",
                     "create_stream", "destroy_stream", "malloc", "free", "memcpy",
                     "malloc_host", "free_host"):
            setattr(self.rt, name, self._call(f"rt.{name}"))
        for name in ("load_from_file", "unload", "create_desc", "destroy_desc", "get_desc",
                     "get_num_inputs", "get_num_outputs", "get_input_size_by_index",
                     "get_output_size_by_index", "create_dataset", "destroy_dataset",
                     "add_dataset_buffer", "get_dataset_num_buffers", "get_dataset_buffer",
                     "execute"):
            setattr(self.mdl, name, self._call(f"mdl.{name}"))
        for name in ("init", "finalize", "create_data_buffer", "destroy_data_buffer"):
            setattr(self, name, self._call(name))
        if modern:
            self.util.bytes_to_ptr = lambda data: ("bytes", data)
            self.util.ptr_to_bytes = lambda ptr, size: bytes(self.memory[ptr][:size])
        else:
            self.util.numpy_to_ptr = lambda array: ("array", array)

    class _Ns:
        pass

    def _call(self, name: str) -> Any:
        def call(*args: Any) -> Any:
            self.calls.append(name)
            code = 507011 if name == self.fail else 0
            return self._result(name, args, code)
        return call

    def _allocate(self, size: int) -> int:
        ptr = len(self.memory) + 1
        self.memory[ptr] = bytearray(size)
        return ptr

    def _read(self, src: Any) -> bytes:
        if isinstance(src, int):
            return bytes(self.memory[src])
        kind, payload = src
        return payload if kind == "bytes" else payload.tobytes()

    def _result(self, name: str, args: tuple[Any, ...], code: int) -> Any:
        if name in ("mdl.get_input_size_by_index", "mdl.get_output_size_by_index"):
            return 3 * 4
        if name in ("mdl.get_num_inputs", "mdl.get_num_outputs"):
            return 1
        if name in ("rt.malloc", "rt.malloc_host"):
            return self._allocate(args[0]), code
        if name == "mdl.create_dataset":
            ptr = 1000 + len(self.datasets)
            self.datasets[ptr] = []
            return ptr
        if name == "mdl.add_dataset_buffer":
            self.datasets[args[0]].append(args[1])
            return None, code
        if name == "mdl.get_dataset_num_buffers":
            return len(self.datasets[args[0]])
        if name == "mdl.get_dataset_buffer":
            return self.datasets[args[0]][args[1]]
        if name == "create_data_buffer":
            return args[0]
        if name == "rt.memcpy":
            dst, _, src, size, _ = args
            data = self._read(src)[:size]
            if isinstance(dst, int):
                self.memory[dst][:size] = data
            else:
                dst[1].reshape(-1).view(np.uint8)[:] = np.frombuffer(data, np.uint8)
            return code
        if name == "mdl.execute":
            (source,), (target,) = self.datasets[args[1]], self.datasets[args[2]]
            doubled = np.frombuffer(bytes(self.memory[source]), np.float32) * 2
            self.memory[target][:] = doubled.tobytes()
            return code
        if name in ("rt.create_context", "rt.create_stream", "mdl.load_from_file"):
            return 7, code
        if name == "mdl.create_desc":
            return 9
        return code


@pytest.mark.parametrize("modern", [True, False], ids=["bytes_to_ptr", "numpy_to_ptr"])
def test_acl_calls_run_a_model_in_cann_order_and_release_everything(modern: bool) -> None:
    acl = RecordingAcl(modern=modern)
    with AclModel("/models/net.om", device_id=0, acl=acl) as model:
        (out,) = model.run([np.array([1, 2, 3], np.float32)], [(np.dtype(np.float32), (3,))])
    np.testing.assert_array_equal(out, [2, 4, 6])
    opening = ["init", "rt.set_device", "rt.create_context", "rt.create_stream",
               "mdl.load_from_file", "mdl.create_desc", "mdl.get_desc"]
    assert acl.calls[:len(opening)] == opening
    run = acl.calls[acl.calls.index("mdl.create_dataset"):]
    assert run.index("rt.memcpy") < run.index("mdl.execute") < len(run) - run[::-1].index(
        "rt.memcpy")
    closing = ["mdl.destroy_desc", "mdl.unload", "rt.destroy_stream", "rt.destroy_context",
               "rt.reset_device", "finalize"]
    assert acl.calls[-len(closing):] == closing
    assert acl.calls.count("rt.malloc") == acl.calls.count("rt.free") == 2
    assert acl.calls.count("rt.malloc_host") == acl.calls.count("rt.free_host") == int(modern)


def test_a_failing_acl_call_is_named_and_what_was_acquired_is_released() -> None:
    acl = RecordingAcl(fail="mdl.load_from_file")
    with pytest.raises(AclError, match=r"acl.mdl.load_from_file\('/m.om'\) failed with ACL "
                                       r"error 507011"):
        AclModel("/m.om", acl=acl)
    assert acl.calls[-4:] == ["rt.destroy_stream", "rt.destroy_context", "rt.reset_device",
                              "finalize"]


def test_without_pyacl_the_error_says_how_to_get_it() -> None:
    with pytest.raises(AclError, match="pyACL is not importable.*set_env.sh"):
        AclModel("/m.om")


def test_the_npu_claims_what_onnx_can_carry_and_the_emulator_any_pure_op() -> None:
    from mskernel_ascend.capabilities import emulator_capabilities, npu_capabilities

    npu, emulator = npu_capabilities(), emulator_capabilities()
    for op in ("conv", "matmul", "ascend.conv2d", "ascend.matmul_bias", "log_softmax"):
        assert op in npu and op in emulator
    for op in ("random_normal", "fft", "ascend.transdata"):
        assert op not in npu and op in emulator
    for op in ("ref_load", "ref_store"):  # parameters: the emulator runs a whole step
        assert op not in npu and op in emulator
    for op in ("If", "While"):
        assert op not in npu and op not in emulator


def test_the_fused_ops_onnx_forms_agree_with_their_reference(tmp_path: Path) -> None:
    """Every NCHW sample of ascend.conv2d (stride, asymmetric padding, ReLU) and of
    ascend.matmul_bias, in float32 and float16, through ONNX Runtime."""
    from mskernel_sdk import sample_graph, samples_for, tolerance_for_reduction

    from mskernel_onnx.export import to_onnx

    checked = 0
    for op in ("ascend.conv2d", "ascend.matmul_bias"):
        for sample in samples_for(op):
            if sample.attrs.get("format", "NCHW") != "NCHW":
                continue
            graph = sample_graph(sample)
            model = to_onnx(graph, opset=13)
            session = onnxruntime.InferenceSession(model.SerializeToString(),
                                                   providers=["CPUExecutionProvider"])
            names = [i.name for i in session.get_inputs()]
            (got,) = session.run(None, dict(zip(names, sample.args)))
            (expected,) = run_reference(graph, list(sample.args))
            # sums of products: the bound of their length and magnitudes (|x| * |w| + |b|)
            w = sample.args[1]
            length = (int(np.prod(w.shape[1:])) if op == "ascend.conv2d" else w.shape[0]) + 1
            (magnitude,) = run_reference(graph, [np.abs(a) for a in sample.args])
            rtol, atol = tolerance_for_reduction(graph.outputs[0].type.dtype, length, magnitude)
            assert np.all(np.abs(got - expected) <= atol + rtol * np.abs(expected))
            checked += 1
    assert checked == 6  # 4 convolutions, 2 matmuls


def test_compile_offline_runs_atc_once_per_model(tmp_path: Path) -> None:
    """compile_offline end to end with a stand-in for ATC that records its command line and
    writes the .om file it was asked for: the ONNX beside it, ATC run once, then cached."""
    from mskernel_ascend.offline import compile_offline

    log = tmp_path / "atc.log"
    atc = tmp_path / "atc"
    atc.write_text(f'#!/bin/sh\necho "$@" >> {log}\nfor a in "$@"; do case "$a" in '
                   f'--output=*) touch "${{a#--output=}}.om";; esac; done\n')
    atc.chmod(0o755)
    cache = tmp_path / "cache"
    cache.mkdir()
    om = compile_offline(conv_net(), "Ascend910B1", "force_fp16", atc=str(atc), directory=cache)
    assert om.suffix == ".om" and om.is_file()
    onnx.checker.check_model(onnx.load(str(om.with_suffix(".onnx"))), full_check=True)
    (line,) = log.read_text().splitlines()
    assert f"--model={om.with_suffix('.onnx')}" in line and "--soc_version=Ascend910B1" in line
    again = compile_offline(conv_net(), "Ascend910B1", "force_fp16", atc=str(atc),
                            directory=cache)
    assert again == om and len(log.read_text().splitlines()) == 1
    other = compile_offline(conv_net(), "Ascend910B1", "allow_mix_precision", atc=str(atc),
                            directory=cache)
    assert other != om and len(log.read_text().splitlines()) == 2
    assert not list(cache.glob(".*.onnx"))  # no staging file left behind
