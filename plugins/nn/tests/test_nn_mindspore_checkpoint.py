"""MindSpore's protobuf checkpoints: files MindSpore 2.10.0 saved (``fixtures/``) load tensor
for tensor, the same entries save to MindSpore's bytes, files encoded here by hand from
``checkpoint.proto``'s wire format (sliced tensors, strings, legacy scalars) load, and damaged
or forged files are clear errors."""

import os
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest

from mindspore_checkpoint_values import APPEND, TENSORS
from mskernel.errors import FileFormatError
from mskernel.frontend.tensor import Tensor
from mskernel.ir import dtypes
from mskernel.ir.dtypes import round_to_bfloat16
from mskernel_nn.api import Dense
from mskernel_nn.checkpoint import load_checkpoint, load_param_into_net, save_checkpoint

FIXTURES = Path(__file__).parent / "fixtures"


def dtype_of(name):
    return dtypes.bool_ if name == "bool" else getattr(dtypes, name)


def expected(name):
    kind, values = TENSORS[name]
    if kind == "bfloat16":
        return round_to_bfloat16(np.asarray(values, np.float32))
    return np.asarray(values).astype(dtype_of(kind).storage)


def fixture_entries():
    return [{"name": name, "data": Tensor(expected(name), dtype=dtype_of(kind))}
            for name, (kind, _) in TENSORS.items()]


@pytest.mark.parametrize("fixture", ["mindspore_plain.ckpt", "mindspore_crc.ckpt"])
def test_mindspores_checkpoints_load_tensor_for_tensor(fixture):
    loaded = load_checkpoint(FIXTURES / fixture, crc_check=fixture.endswith("crc.ckpt"))
    # MindSpore's writer leaves empty tensors out
    assert list(loaded) == [n for n in TENSORS if n != "empty"] + ["epoch_num", "lr", "note"]
    for name, (kind, _) in TENSORS.items():
        if name == "empty":
            continue
        param = loaded[name]
        assert param.name == name and param.dtype is dtype_of(kind)
        np.testing.assert_array_equal(param.numpy(), expected(name))
        assert param.numpy().shape == np.shape(TENSORS[name][1])
    assert loaded["epoch_num"].dtype is dtypes.int64 and loaded["epoch_num"].numpy() == 3
    assert loaded["lr"].dtype is dtypes.float32 and loaded["lr"].numpy() == 0.125
    assert loaded["note"] == APPEND["note"]


@pytest.mark.parametrize("fixture, crc", [("mindspore_plain.ckpt", False),
                                          ("mindspore_crc.ckpt", True)])
def test_saving_the_same_entries_gives_mindspores_bytes(tmp_path, fixture, crc):
    with pytest.warns(UserWarning, match="empty tensors are left out.*: empty"):
        save_checkpoint(fixture_entries(), tmp_path / "ours", append_dict=APPEND,
                        format="ckpt", crc_check=crc)
    assert (tmp_path / "ours.ckpt").read_bytes() == (FIXTURES / fixture).read_bytes()


def test_a_network_moves_through_a_mindspore_checkpoint(tmp_path):
    net = Dense(5, 3, has_bias=True)
    save_checkpoint(net, str(tmp_path / "dense"), format="ckpt", append_dict={"epoch": 2})
    assert sorted(os.listdir(tmp_path)) == ["dense.ckpt"]
    fresh = Dense(5, 3, has_bias=True)
    params = load_checkpoint(str(tmp_path / "dense.ckpt"))
    assert load_param_into_net(fresh, params) == ([], ["epoch"])
    for (name, a), (_, b) in zip(net.parameters_and_names(), fresh.parameters_and_names()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)


def test_types_mindspore_cannot_hold_are_refused():
    with pytest.raises(ValueError, match="'z' is complex64; MindSpore's checkpoints hold"):
        save_checkpoint({"z": np.ones(2, np.complex64)}, "unused.ckpt", format="ckpt")
    with pytest.raises(ValueError, match="format is None .* or 'ckpt'"):
        save_checkpoint({"w": np.ones(2)}, "unused.ckpt", format="safetensors")
    assert not os.path.exists("unused.ckpt")


# -- files encoded by hand from checkpoint.proto's wire format ---------------------------------


def varint(n):
    n &= (1 << 64) - 1  # a negative int64 is its two's complement, ten bytes long
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def field(number, wire_type, payload):
    if wire_type == 0:
        return varint(number << 3) + varint(payload)
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def tensor_proto(dims, kind, content):
    return (b"".join(field(1, 0, d) for d in dims) + field(2, 2, kind.encode())
            + field(3, 2, content))


def value(tag, tensor=None, maptensor=None):
    body = field(1, 2, tag.encode())
    body += field(2, 2, tensor) if tensor is not None else field(3, 2, maptensor)
    return field(1, 2, body)  # one Checkpoint holding one Value, as MindSpore writes each


def write(tmp_path, *values):
    path = tmp_path / "hand.ckpt"
    path.write_bytes(b"".join(values))
    return str(path)


def test_hand_encoded_entries_load(tmp_path):
    big = np.arange(12, dtype="<f4").reshape(3, 4)
    raw = big.tobytes()
    bf16 = np.array([0x3F80, 0xC060], "<u2").tobytes()  # 1.0, -3.5
    path = write(
        tmp_path,
        *(value("big", tensor_proto([3, 4], "Float32", raw[at:at + 20]))
          for at in range(0, len(raw), 20)),  # a tensor in slices, as MindSpore writes >512 MiB
        value("legacy", tensor_proto([0], "Float64", struct.pack("<d", 2.5))),
        value("flags", tensor_proto([3], "Bool", b"\x00\x02\x01")),
        value("brain", tensor_proto([2], "BFloat16", bf16)),
        value("rng", tensor_proto([], "random_op", b"\x01\x02")),
        value("table", maptensor=field(1, 2, tensor_proto([1], "Int64", bytes(8)))),
        value("name", tensor_proto([0], "str", "héllo".encode("utf-32-le"))),
    )
    with pytest.warns(UserWarning, match="map parameters are not supported.*: table"):
        loaded = load_checkpoint(path)
    assert list(loaded) == ["big", "legacy", "flags", "brain", "name"]
    np.testing.assert_array_equal(loaded["big"].numpy(), big)
    assert loaded["legacy"].numpy().shape == () and loaded["legacy"].numpy() == 2.5
    assert loaded["flags"].numpy().tolist() == [False, True, True]
    assert loaded["brain"].dtype is dtypes.bfloat16
    assert loaded["brain"].numpy().tolist() == [1.0, -3.5]
    assert loaded["name"] == "héllo"


GOOD = value("w", tensor_proto([2, 2], "Float32", bytes(16)))


@pytest.mark.parametrize("data, message", [
    (GOOD[:-3], "truncated or damaged: the entry at byte 0 declares"),
    (GOOD[:1], "truncated inside a length"),
    (b"\x0a" + b"\xff" * 12, "over-long varint"),
    (b"\x0a\xff\xff\xff\xff\x0f" + GOOD, r"declares 4294967295 bytes, \d+ are left"),
    (value("w", tensor_proto([2**40, 2**40], "Float32", bytes(16))),
     r"shape \[1099511627776, 1099511627776\] needs .* but holds 16"),
    (value("w", tensor_proto([-1], "Float32", bytes(4))), "negative dims"),
    (value("w", tensor_proto([2], "Complex64", bytes(16))), "type 'Complex64'; the types"),
    (value("w", field(1, 0, 2)), "lacks its type or contents"),
    (value("s", tensor_proto([0], "str", b"\xff\xff\xff\xff")), "not valid UTF-32"),
    (GOOD + value("v", tensor_proto([1], "Int8", b"\0")) + GOOD, "'w' appears twice, apart"),
    (field(1, 2, field(2, 2, tensor_proto([1], "Int8", b"\0"))), "has no name"),
    (b"\x10\x01", "not an mskernel checkpoint nor a MindSpore one.*field 2 of wire type 0"),
    (field(1, 2, field(1, 2, b"w") + varint(2 << 3 | 2) + varint(100) + b"abc"),
     "the entry at byte 0 is damaged"),
])
def test_damaged_and_forged_files_are_clear_errors(tmp_path, data, message):
    with pytest.raises(FileFormatError, match=message):
        load_checkpoint(write(tmp_path, data))


def test_a_crc_mismatch_is_caught_and_a_missing_crc_warned(tmp_path):
    data = bytearray((FIXTURES / "mindspore_crc.ckpt").read_bytes())
    data[40] ^= 0x01  # inside conv.weight's values
    with pytest.raises(FileFormatError, match="damaged: its CRC-32 is 0x"):
        load_checkpoint(write(tmp_path, bytes(data)))
    with pytest.warns(UserWarning, match="has no CRC to check"):
        load_checkpoint(FIXTURES / "mindspore_plain.ckpt", crc_check=True)


def test_mutated_checkpoints_load_or_fail_with_a_file_error(tmp_path):
    pristine = (FIXTURES / "mindspore_plain.ckpt").read_bytes()
    rng = np.random.default_rng(0)
    outcomes = {"loaded": 0, "refused": 0}
    for _ in range(300):
        data = bytearray(pristine)
        for at in rng.integers(0, len(data), int(rng.integers(1, 4))):
            data[at] = int(rng.integers(0, 256))
        cut = len(data) if rng.random() < 0.8 else int(rng.integers(0, len(data)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                load_checkpoint(write(tmp_path, bytes(data[:cut])))
                outcomes["loaded"] += 1
            except FileFormatError:
                outcomes["refused"] += 1
    assert outcomes["loaded"] and outcomes["refused"], outcomes
