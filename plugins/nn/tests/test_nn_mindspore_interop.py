"""Checkpoints moving between mskernel and a real MindSpore, run when
``MSKERNEL_MINDSPORE_PYTHON`` names a Python with MindSpore installed::

    python3.11 -m venv /tmp/msenv && /tmp/msenv/bin/pip install mindspore==2.10.0 'numpy<2'
    MSKERNEL_MINDSPORE_PYTHON=/tmp/msenv/bin/python \\
        pytest plugins/nn/tests/test_nn_mindspore_interop.py

(``test_nn_mindspore_checkpoint.py`` checks the same against files MindSpore saved, without
it.)  Every tensor is compared bit for bit, through its bytes.
"""

import json
import os
import subprocess

import numpy as np
import pytest

from mskernel.frontend.tensor import Tensor
from mskernel.ir import dtypes
from mskernel.ir.dtypes import bfloat16_to_bits
from mskernel_nn.checkpoint import load_checkpoint, save_checkpoint

MINDSPORE_PYTHON = os.environ.get("MSKERNEL_MINDSPORE_PYTHON")
pytestmark = pytest.mark.skipif(not MINDSPORE_PYTHON,
                                reason="set MSKERNEL_MINDSPORE_PYTHON to a Python with "
                                       "MindSpore to run these")

# Prints each entry of a checkpoint MindSpore loaded: name → [type, shape, bytes in hex]
# (bfloat16 as its bit patterns), strings as themselves.
DUMP = """
import json, sys
import numpy as np
import mindspore as ms

def dump(params):
    out = {}
    for name, value in params.items():
        if isinstance(value, str):
            out[name] = value
            continue
        if value.dtype == ms.bfloat16:
            bits = (value.float().asnumpy().view(np.uint32) >> 16).astype("<u2")
            out[name] = ["BFloat16", list(value.shape), bits.tobytes().hex()]
        else:
            array = value.asnumpy()
            out[name] = [str(value.dtype), list(array.shape), array.tobytes().hex()]
    return out
"""
LOAD = DUMP + "print(json.dumps(dump(ms.load_checkpoint(sys.argv[1]))))"
SAVE_NETWORK = DUMP + """
from mindspore import nn
ms.set_seed(1)
class LeNet5(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.bn = nn.BatchNorm2d(16)
        self.fc1 = nn.Dense(16 * 5 * 5, 120)
        self.fc2 = nn.Dense(120, 10)
net = LeNet5()
ms.save_checkpoint(net, sys.argv[1], append_dict={"epoch_num": 5, "tag": "lenet"},
                   crc_check=True)
print(json.dumps(dump({p.name: p for p in net.get_parameters()})))
"""


def mindspore(*args):
    result = subprocess.run([MINDSPORE_PYTHON, "-c", *args], capture_output=True, text=True,
                            timeout=600, env={**os.environ, "GLOG_v": "3"}, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def ours(value):
    if isinstance(value, str):
        return value
    array, dtype = value.numpy(), value.dtype
    if dtype is dtypes.bfloat16:
        return ["BFloat16", list(array.shape), bfloat16_to_bits(array).tobytes().hex()]
    name = {"bool": "Bool", "bfloat16": "BFloat16"}.get(dtype.name,
                                                       dtype.name.capitalize().replace("Ui", "UI"))
    return [name, list(array.shape), np.ascontiguousarray(array).tobytes().hex()]


def test_mindspore_loads_what_mskernel_saves(tmp_path):
    rng = np.random.default_rng(0)
    entries = {
        "w32": Tensor(rng.standard_normal((4, 3)).astype(np.float32)),
        "w16": Tensor(rng.standard_normal(5).astype(np.float16)),
        "wbf": Tensor(rng.standard_normal(6).astype(np.float32), dtype=dtypes.bfloat16),
        "w64": Tensor(rng.standard_normal((2, 2))),
        "i32": Tensor(rng.integers(-9, 9, 7).astype(np.int32)),
        "i64": Tensor(np.array(-(2**50), np.int64)),
        "u8": Tensor(np.arange(9, dtype=np.uint8).reshape(3, 3)),
        "flags": Tensor(np.array([True, False])),
    }
    path = tmp_path / "ours.ckpt"
    save_checkpoint(entries, path, append_dict={"step": 12, "note": "from mskernel"},
                    format="ckpt", crc_check=True)
    loaded = mindspore(LOAD, str(path))
    expected = {name: ours(value) for name, value in entries.items()}
    expected["step"] = ["Int64", [], np.int64(12).tobytes().hex()]
    expected["note"] = "from mskernel"
    assert loaded == expected


def test_mskernel_loads_what_mindspore_saves(tmp_path):
    path = tmp_path / "lenet.ckpt"
    saved = mindspore(SAVE_NETWORK, str(path))
    loaded = load_checkpoint(path, crc_check=True)
    assert loaded["tag"] == "lenet" and loaded["epoch_num"].numpy() == 5
    assert len(saved) == 10  # 2 conv weights (no bias), 4 batch-norm tensors, 2 dense layers
    for name, value in saved.items():
        assert ours(loaded[name]) == value, name
