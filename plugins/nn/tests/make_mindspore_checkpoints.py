"""Write ``fixtures/mindspore_plain.ckpt`` and ``fixtures/mindspore_crc.ckpt`` with MindSpore::

    python3.11 -m venv /tmp/msenv && /tmp/msenv/bin/pip install mindspore==2.10.0 'numpy<2'
    /tmp/msenv/bin/python plugins/nn/tests/make_mindspore_checkpoints.py
"""

from pathlib import Path

import mindspore as ms

from mindspore_checkpoint_values import APPEND, TENSORS

FIXTURES = Path(__file__).resolve().parent / "fixtures"

if __name__ == "__main__":
    entries = [{"name": name, "data": ms.Tensor(values, getattr(ms, dtype))}
               for name, (dtype, values) in TENSORS.items()]
    ms.save_checkpoint(entries, str(FIXTURES / "mindspore_plain.ckpt"), append_dict=APPEND)
    ms.save_checkpoint(entries, str(FIXTURES / "mindspore_crc.ckpt"), append_dict=APPEND,
                       crc_check=True)
