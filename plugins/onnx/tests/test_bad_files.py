"""Truncated, corrupted and hostile ONNX files are clear errors: no crash, no allocation sized
by a forged field, no file read outside the model's directory, no code run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from mskernel_onnx.errors import OnnxFileError, OnnxImportError
from mskernel_onnx.importer import import_model
from onnx_models import model, tensor

F = TensorProto.FLOAT


def sample_model() -> onnx.ModelProto:
    """A model with initializers, attributes of several kinds and a subgraph."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    then = helper.make_graph([helper.make_node("Relu", ["p"], ["t"])], "then", [],
                             [tensor("t", [1, 4, 3, 3])])
    other = helper.make_graph([helper.make_node("Neg", ["p"], ["e"])], "else", [],
                              [tensor("e", [1, 4, 3, 3])])
    return model([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                  helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
                  helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
                  helper.make_node("Greater", ["s", "zero"], ["cond"]),
                  helper.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other)],
                 [tensor("x", [1, 3, 6, 6])], [tensor("y", [1, 4, 3, 3])],
                 [w, numpy_helper.from_array(np.array(0, np.float32), "zero")])


# --- damaged files ------------------------------------------------------------------------------

#: Imports every mutant of a model file under a 3 GiB address-space limit, so that an
#: allocation sized by a forged field fails the run (as MemoryError, an "other" outcome)
#: instead of going unnoticed; prints the outcome counts.
FUZZ = textwrap.dedent("""
    import json, os, resource, sys
    import numpy as np
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    from mskernel_sdk import MskernelError
    from mskernel_onnx.importer import import_model
    data = open(sys.argv[1], "rb").read()
    rng = np.random.default_rng(int(sys.argv[2]))
    counts, others = {"ok": 0, "error": 0, "other": 0}, []
    path = os.path.join(sys.argv[3], "mutant.onnx")
    for n in range(int(sys.argv[4])):
        b = bytearray(data)
        kind = n % 4
        if kind == 0:    # truncated
            b = b[:int(rng.integers(0, len(b)))]
        elif kind == 1:  # flipped bits
            for _ in range(int(rng.integers(1, 4))):
                i = int(rng.integers(0, len(b)))
                b[i] ^= 1 << int(rng.integers(0, 8))
        elif kind == 2:  # changed bytes (a length or a varint, often)
            for _ in range(int(rng.integers(1, 4))):
                b[int(rng.integers(0, len(b)))] = int(rng.integers(0, 256))
        else:            # a range of bytes repeated or cut out
            i, j = sorted(int(v) for v in rng.integers(0, len(b), 2))
            b = b[:i] + b[j:] if n % 8 == 3 else b[:j] + b[i:j] + b[j:]
        with open(path, "wb") as f:
            f.write(bytes(b))
        try:
            import_model(path)
            counts["ok"] += 1
        except MskernelError:
            counts["error"] += 1
        except BaseException as exc:
            counts["other"] += 1
            others.append(f"{type(exc).__name__}: {exc}"[:200])
    print(json.dumps({"counts": counts, "others": others[:5]}))
""")


def test_damaged_files_are_errors_or_valid_models(tmp_path):
    """240 mutants (truncated, flipped bits, changed bytes, cut or repeated ranges; fixed
    seed): each either imports or raises an mskernel error.  Run in a child process under an
    address-space limit, so a crash or an oversized allocation fails the test."""
    path = tmp_path / "model.onnx"
    path.write_bytes(sample_model().SerializeToString())
    run = subprocess.run([sys.executable, "-c", FUZZ, str(path), "17", str(tmp_path), "240"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["counts"]["other"] == 0, result["others"]
    assert result["counts"]["error"] > 100


@pytest.mark.parametrize("kept", [0.0, 0.01, 0.1, 0.5, 0.9, 0.999])
def test_a_truncated_file_names_the_file(tmp_path, kept):
    data = sample_model().SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[:int(len(data) * kept)])
    with pytest.raises(OnnxFileError, match="cut.onnx"):
        import_model(path)


def test_a_file_that_is_not_onnx(tmp_path):
    path = tmp_path / "image.onnx"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    with pytest.raises(OnnxFileError, match="image.onnx"):
        import_model(path)


def test_a_missing_file(tmp_path):
    with pytest.raises(OnnxFileError, match="cannot read the model"):
        import_model(tmp_path / "absent.onnx")


# --- forged sizes -------------------------------------------------------------------------------


def _with_initializer(t: TensorProto) -> onnx.ModelProto:
    return model([helper.make_node("Identity", [t.name], ["y"])], [], [tensor("y", None)], [t])


def test_a_huge_dimension_on_a_small_tensor_allocates_nothing():
    forged = TensorProto(name="w", data_type=F, dims=[1 << 40], raw_data=b"\0" * 4)
    with pytest.raises(OnnxFileError, match="describe .* bytes, more than"):
        import_model(_with_initializer(forged))
    forged = TensorProto(name="w", data_type=F, dims=[1000], raw_data=b"\0" * 8)
    with pytest.raises(OnnxFileError, match="holds 8 bytes of raw data, but dims"):
        import_model(_with_initializer(forged))
    forged = TensorProto(name="w", data_type=F, dims=[1000], float_data=[1.0, 2.0])
    with pytest.raises(OnnxFileError, match="does not match dims"):
        import_model(_with_initializer(forged))


def test_huge_declared_shapes_are_imported_without_allocating():
    """Shapes are only types: a 2**40-element input or a ConstantOfShape of 2**40 elements
    import (nothing is folded past the folding limit); running them is the user's call."""
    big = numpy_helper.from_array(np.array([1 << 20, 1 << 20], np.int64), "shape")
    m = model([helper.make_node("ConstantOfShape", ["shape"], ["zeros"]),
               helper.make_node("Add", ["x", "zeros"], ["y"])],
              [tensor("x", [1 << 20, 1 << 20])], [tensor("y", None)], [big])
    imported = import_model(m)
    assert imported.graph.outputs[0].type.shape == (1 << 20, 1 << 20)


def test_a_resize_to_a_forged_size_is_refused():
    sizes = numpy_helper.from_array(np.array([1, 1, 1 << 30, 4], np.int64), "sizes")
    m = model([helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear")],
              [tensor("x", [1, 1, 1 << 20, 4])], [tensor("y", None)], [sizes])
    with pytest.raises(OnnxImportError, match="interpolation matrix .* more than"):
        import_model(m)


# --- external data ------------------------------------------------------------------------------


def _external_model(tmp_path, location: str, offset: int = 0, length: int = 16):
    t = TensorProto(name="w", data_type=F, dims=[4], data_location=TensorProto.EXTERNAL)
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        t.external_data.add(key=key, value=value)
    m = _with_initializer(t)
    path = tmp_path / "model" / "m.onnx"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(m.SerializeToString())
    return path


def test_external_data_inside_the_model_directory_is_read(tmp_path):
    path = _external_model(tmp_path, "weights.bin", offset=4)
    (path.parent / "weights.bin").write_bytes(b"\0" * 4 + np.arange(4, dtype=np.float32).tobytes())
    imported = import_model(path)
    np.testing.assert_array_equal(imported.weights["w"], [0, 1, 2, 3])


@pytest.mark.parametrize("location, why", [
    ("../outside.bin", "not a relative path inside"),
    ("/etc/passwd", "not a relative path inside"),
    ("sub/../../outside.bin", "not a relative path inside"),
])
def test_external_data_outside_the_directory_is_refused(tmp_path, location, why):
    (tmp_path / "outside.bin").write_bytes(b"\0" * 16)
    with pytest.raises(OnnxFileError, match=why):
        import_model(_external_model(tmp_path, location))


def test_a_symbolic_link_leading_out_is_refused(tmp_path):
    (tmp_path / "secret.bin").write_bytes(b"\0" * 16)
    path = _external_model(tmp_path, "link.bin")
    os.symlink(tmp_path / "secret.bin", path.parent / "link.bin")
    with pytest.raises(OnnxFileError, match="leads outside the model's directory"):
        import_model(path)


@pytest.mark.parametrize("offset, length, why", [
    (8, 16, "needs bytes 8..24"),
    (0, 12, "does not hold the 16 bytes"),
    (-4, 16, "does not hold the 16 bytes"),
    (1 << 62, 16, "needs bytes"),
])
def test_forged_offsets_and_lengths_are_refused(tmp_path, offset, length, why):
    path = _external_model(tmp_path, "weights.bin", offset, length)
    (path.parent / "weights.bin").write_bytes(b"\0" * 16)
    with pytest.raises(OnnxFileError, match=why):
        import_model(path)


def test_external_data_of_a_model_in_memory_is_refused(tmp_path):
    path = _external_model(tmp_path, "weights.bin")
    with pytest.raises(OnnxFileError, match="not read from a file"):
        import_model(path.read_bytes())


# --- hostile structure --------------------------------------------------------------------------


def _nested_ifs(depth: int) -> onnx.ModelProto:
    """Ifs nested ``depth`` deep in their then branches (each else branch is flat)."""
    flat = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "flat", [],
                             [tensor("e", [1])])
    inner = helper.make_graph([helper.make_node("Identity", ["x"], ["y0"])], "g0", [],
                              [tensor("y0", [1])])
    for level in range(1, depth):
        node = helper.make_node("If", ["c"], [f"y{level}"], then_branch=inner, else_branch=flat)
        inner = helper.make_graph([node], f"g{level}", [], [tensor(f"y{level}", [1])])
    return model(list(inner.node), [tensor("c", [], TensorProto.BOOL), tensor("x", [1])],
                 [tensor(f"y{depth - 1}", [1])])


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field, written by hand (protobuf's own serializer
    recurses once per level and would overflow the C stack on the nesting below)."""
    length, varint = len(payload), bytearray()
    while True:
        byte, length = length & 0x7F, length >> 7
        varint.append(byte | (0x80 if length else 0))
        if not length:
            break
    return bytes([number << 3 | 2]) + bytes(varint) + payload


def _deeply_nested_file(depth: int) -> bytes:
    """A model whose graph holds an If whose branch holds an If ... ``depth`` levels."""
    graph = b""
    for _ in range(depth):
        attribute = _field(1, b"then_branch") + _field(6, graph) + bytes([20 << 3, 5])
        node = _field(1, b"c") + _field(4, b"If") + _field(5, attribute)
        graph = _field(1, node)
    return _field(7, graph) + bytes([1 << 3, 8])  # graph, ir_version 8


def test_deep_nesting_is_refused_by_the_parser_or_the_import(tmp_path):
    path = tmp_path / "deep.onnx"
    path.write_bytes(_deeply_nested_file(1000))
    with pytest.raises(OnnxFileError, match="deep.onnx: not a valid ONNX model"):
        import_model(path)
    shallow = tmp_path / "shallow.onnx"  # as deep as protobuf parses: imported
    shallow.write_bytes(_nested_ifs(30).SerializeToString())
    assert [n.op for n in import_model(shallow).graph.nodes] == ["If"]


def test_a_function_calling_itself_is_refused():
    function = helper.make_function("local", "Loop_", ["a"], ["b"],
                                    [helper.make_node("Loop_", ["a"], ["b"], domain="local")],
                                    [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])
    m = model([helper.make_node("Loop_", ["x"], ["y"], domain="local")], [tensor("x", [2])],
              [tensor("y", [2])], functions=[function])
    m.opset_import.extend([helper.make_opsetid("local", 1)])
    with pytest.raises(OnnxImportError, match="nest deeper than"):
        import_model(m)


def test_an_op_of_an_unknown_domain_runs_nothing():
    m = model([helper.make_node("Exec", ["x"], ["y"], domain="com.evil")], [tensor("x", [2])],
              [tensor("y", [2])])
    m.opset_import.extend([helper.make_opsetid("com.evil", 1)])
    with pytest.raises(OnnxImportError, match="no op 'Exec' in domain 'com.evil'"):
        import_model(m)


def test_wrong_types_are_errors():
    mixed = model([helper.make_node("Add", ["x", "i"], ["y"])],
                  [tensor("x", [2]), tensor("i", [2], TensorProto.INT64)], [tensor("y", [2])])
    with pytest.raises(OnnxImportError, match=r"\(Add, opset 18\).*same dtype"):
        import_model(mixed)
    float_perm = model([helper.make_node("Transpose", ["x"], ["y"])], [tensor("x", [2, 3])],
                       [tensor("y", [3, 2])])
    float_perm.graph.node[0].attribute.extend([helper.make_attribute("perm", [1.0, 0.0])])
    with pytest.raises(OnnxImportError, match=r"\(Transpose, opset 18\)"):
        import_model(float_perm)
