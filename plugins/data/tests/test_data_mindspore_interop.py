"""MindRecord files moving between mskernel and a real MindSpore, run when
``MSKERNEL_MINDSPORE_PYTHON`` names a Python with MindSpore installed::

    python3.11 -m venv /tmp/msenv && /tmp/msenv/bin/pip install mindspore==2.10.0 'numpy<2'
    MSKERNEL_MINDSPORE_PYTHON=/tmp/msenv/bin/python \
        pytest plugins/data/tests/test_data_mindspore_interop.py

(``test_data_mindrecord.py`` checks the same against files MindSpore wrote, without it.)
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mindrecord_rows
from mskernel_data.api import MindDataset
from mskernel_data.mindrecord import FileWriter

MINDSPORE_PYTHON = os.environ.get("MSKERNEL_MINDSPORE_PYTHON")
pytestmark = pytest.mark.skipif(not MINDSPORE_PYTHON,
                                reason="set MSKERNEL_MINDSPORE_PYTHON to a Python with "
                                       "MindSpore to run these")
HERE = Path(__file__).parent

READ_WITH_MINDSPORE = """
import json, sys
import mindspore.dataset as ds
for path in sys.argv[1:]:
    rows = []
    for row in ds.MindDataset(path, shuffle=False).create_dict_iterator(output_numpy=True):
        rows.append({k: [v.dtype.str, list(v.shape), v.tobytes().hex()] for k, v in row.items()})
    print(json.dumps(rows))
"""


def mindspore(*args):
    env = {**os.environ, "PYTHONPATH": str(HERE), "GLOG_v": "3"}
    result = subprocess.run([MINDSPORE_PYTHON, *args], capture_output=True, text=True,
                            timeout=600, env=env, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_mindspore_reads_what_mskernel_writes(tmp_path):
    mindrecord_rows.write(FileWriter, tmp_path)
    names = list(mindrecord_rows.DATASETS)
    paths = [str(tmp_path / (f"{n}.mindrecord0" if mindrecord_rows.DATASETS[n]["shard_num"] > 1
                             else f"{n}.mindrecord")) for n in names]
    outputs = mindspore("-c", READ_WITH_MINDSPORE, *paths).strip().splitlines()[-len(names):]
    for name, path, output in zip(names, paths, outputs):
        ours = MindDataset(path, shuffle=False).create_dict_iterator(output_numpy=True)
        theirs = json.loads(output)
        assert len(theirs) == len(mindrecord_rows.expected_rows(name))
        for mine, row in zip(ours, theirs):
            for key, value in mine.items():
                if value.size == 0 and value.ndim:
                    # MindSpore 2.10 reads an empty integer array as a 0-d value of
                    # whatever bytes its buffer held; the array is empty in the file
                    assert row[key][1] == []
                    continue
                assert [value.dtype.str, list(value.shape), value.tobytes().hex()] == row[key]


def test_mskernel_writes_the_bytes_mindspore_writes(tmp_path):
    (tmp_path / "mindspore").mkdir()
    (tmp_path / "mskernel").mkdir()
    mindspore("-c", "import sys, mindrecord_rows\n"
                    "from mindspore.mindrecord import FileWriter\n"
                    "mindrecord_rows.write(FileWriter, sys.argv[1])", str(tmp_path / "mindspore"))
    mindrecord_rows.write(FileWriter, tmp_path / "mskernel")
    for path in sorted((tmp_path / "mindspore").iterdir()):
        if not path.name.endswith(".db"):
            assert path.read_bytes() == (tmp_path / "mskernel" / path.name).read_bytes()
    assert np.array_equal(sorted(p.name for p in (tmp_path / "mindspore").iterdir()),
                          sorted(p.name for p in (tmp_path / "mskernel").iterdir()))
    assert sys.version_info >= (3, 11)
