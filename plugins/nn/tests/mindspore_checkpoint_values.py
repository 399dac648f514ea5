"""The entries of ``fixtures/mindspore_*.ckpt``: one tensor of each type MindSpore's
checkpoints hold, and ``append_dict`` values (NumPy only, so MindSpore's interpreter runs it
too).  ``make_mindspore_checkpoints.py`` saved them with MindSpore 2.10.0."""

import numpy as np

TENSORS = {  # name → (MindSpore dtype name, values)
    "conv.weight": ("float32", np.linspace(-2, 2, 2 * 3 * 3 * 3).reshape(2, 3, 3, 3)),
    "half": ("float16", np.array([[0.5, -1.25, 65504.0], [1e-3, 0.0, -0.0]])),
    "brain": ("bfloat16", np.array([1.0, -3.5, 1.0e20, 0.15625])),
    "double": ("float64", np.array([np.pi, -np.e, 1e-300])),
    "step": ("int32", np.array(7)),
    "ids": ("int64", np.array([[-(2**40), 2**62], [0, -1]])),
    "bytes": ("uint8", np.arange(250, 256)),
    "small": ("int8", np.array([-128, 127, 0])),
    "mask": ("bool", np.array([[True, False, True]])),
    "empty": ("float32", np.zeros((0, 4))),
}
APPEND = {"epoch_num": 3, "lr": 0.125, "note": "best so far"}
