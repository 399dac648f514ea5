"""The layers of ``mskernel.nn``, one module per family: :mod:`.basic` (``Dense``,
activations, ``Dropout`` …), :mod:`.conv`, :mod:`.norm`, :mod:`.pooling`, :mod:`.embedding`,
:mod:`.container` (``SequentialCell``, ``CellList``), :mod:`.attention` and :mod:`.rnn`."""

from .attention import MultiheadAttention, TransformerEncoderLayer
from .basic import (
    ELU, GELU, Dense, Dropout, Flatten, HSigmoid, HSwish, Identity, LeakyReLU, LogSoftmax,
    PReLU, ReLU, ReLU6, Sigmoid, SiLU, Softmax, Softplus, Tanh, get_activation,
)
from .container import CellList, SequentialCell
from .conv import Conv1d, Conv1dTranspose, Conv2d, Conv2dTranspose, Conv3d, Conv3dTranspose
from .embedding import Embedding
from .norm import BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, LayerNorm
from .pooling import (
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,
    AdaptiveMaxPool2d, AvgPool1d, AvgPool2d, AvgPool3d, MaxPool1d, MaxPool2d, MaxPool3d,
)
from .rnn import GRU, LSTM

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "BatchNorm1d", "BatchNorm2d",
    "BatchNorm3d", "CellList", "Conv1d", "Conv1dTranspose", "Conv2d", "Conv2dTranspose",
    "Conv3d", "Conv3dTranspose", "Dense", "Dropout", "ELU", "Embedding", "Flatten", "GELU",
    "get_activation", "GroupNorm", "GRU", "HSigmoid", "HSwish", "Identity", "LayerNorm",
    "LeakyReLU", "LogSoftmax", "LSTM", "MaxPool1d", "MaxPool2d", "MaxPool3d",
    "MultiheadAttention", "PReLU", "ReLU", "ReLU6", "SequentialCell", "Sigmoid", "SiLU",
    "Softmax", "Softplus", "Tanh", "TransformerEncoderLayer",
]
