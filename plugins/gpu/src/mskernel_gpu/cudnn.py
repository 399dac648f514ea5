"""Convolutions on cuDNN through NVIDIA's cuDNN frontend (``nvidia-cudnn-frontend``, import
``cudnn``): its graph API with heuristics picks an engine per shape.  CuPy 14 removed its own
cuDNN wrappers (they had not followed cuDNN's graph API and were kept only for Chainer), and
NVIDIA's frontend is the maintained Python route, so the backend uses it.

``conv`` runs as ``conv_fprop``, ``conv_transpose`` (the gradient of a convolution with
respect to its input) as ``conv_dgrad`` (its output's dims given, so ``output_padding`` is
exact), ``gpu.conv_wgrad`` (the filter's gradient, :mod:`.wgrad`) as ``conv_wgrad``, with fp32
compute for float16 storage.  A plan is built once per shape, dtype and
geometry and kept.  Without the frontend, or where cuDNN finds no engine (the case and the
reason are kept in ``refused``), the kernels use im2col + cuBLAS
(:func:`.kernels.im2col_conv`) instead.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np


def _contiguous_strides(shape: tuple[int, ...]) -> list[int]:
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return list(reversed(strides))


class CudnnConv:
    """Planned cuDNN convolutions on one handle."""

    def __init__(self, cupy: Any, cudnn: Any) -> None:
        self.cupy, self.cudnn = cupy, cudnn
        self.handle = cudnn.create_handle()
        self.types = {np.dtype(np.float16): cudnn.data_type.HALF,
                      np.dtype(np.float32): cudnn.data_type.FLOAT}
        self.plans: dict[tuple, tuple[Any, Any, Any, Any, int]] = {}  # key -> graph, tensors
        #: cases cuDNN has no engine for (key -> why): the kernels use im2col for them
        self.refused: dict[tuple, str] = {}

    @classmethod
    def create(cls, cupy: Any) -> Optional["CudnnConv"]:
        """``None`` when the frontend or libcudnn is missing (im2col is used then)."""
        try:
            from .probe import load_library

            load_library("cudnn")
            import cudnn
        except (ImportError, OSError):
            return None
        return cls(cupy, cudnn)

    def supports(self, dtype: np.dtype) -> bool:
        return np.dtype(dtype) in self.types

    def _graph(self, x: Any) -> Any:
        return self.cudnn.pygraph(io_data_type=self.types[x.dtype],
                                  intermediate_data_type=self.cudnn.data_type.FLOAT,
                                  compute_data_type=self.cudnn.data_type.FLOAT,
                                  handle=self.handle)

    def _tensor(self, graph: Any, shape: tuple[int, ...], dtype: np.dtype, name: str) -> Any:
        return graph.tensor(name=name, dim=list(shape), stride=_contiguous_strides(shape),
                            data_type=self.types[dtype])

    def _build(self, graph: Any) -> int:
        graph.validate()
        graph.build_operation_graph()
        graph.create_execution_plans([self.cudnn.heur_mode.A, self.cudnn.heur_mode.FALLBACK])
        graph.check_support()
        graph.build_plans()
        return int(graph.get_workspace_size())

    def _convolution(self, kind: str, a: Any, w: Any, geometry: Any,
                     shape: tuple[int, ...]) -> Any:
        """``conv_fprop`` (``a`` the image, ``w`` the filter), ``conv_dgrad`` (``a`` the
        output's gradient, ``w`` the filter) or ``conv_wgrad`` (``a`` the image, ``w`` the
        output's gradient) into a new array of ``shape``, planned once per key;
        ``None`` when cuDNN finds no engine for the case (remembered in :attr:`refused`)."""
        key = (kind, a.shape, w.shape, a.dtype, geometry, shape)
        if key in self.refused:
            return None
        if key not in self.plans:
            try:
                self.plans[key] = self._plan(kind, a, w, geometry, shape)
            except Exception as exc:  # no engine for this case: the caller uses im2col
                self.refused[key] = f"{type(exc).__name__}: {exc}"
                return None
        graph, ta, tw, ty, workspace = self.plans[key]
        y = self.cupy.empty(shape, a.dtype)
        scratch = self.cupy.empty(workspace, np.uint8)
        self.cudnn.set_stream(handle=self.handle,
                              stream=self.cupy.cuda.get_current_stream().ptr)
        graph.execute({ta: a, tw: w, ty: y}, scratch, handle=self.handle)
        return y

    def _plan(self, kind: str, a: Any, w: Any, geometry: Any,
              shape: tuple[int, ...]) -> tuple[Any, Any, Any, Any, int]:
        graph = self._graph(a)
        ta = self._tensor(graph, a.shape, a.dtype, "a")
        tw = self._tensor(graph, w.shape, w.dtype, "w")
        window = dict(pre_padding=[lo for lo, _ in geometry.padding],
                      post_padding=[hi for _, hi in geometry.padding],
                      stride=list(geometry.stride), dilation=list(geometry.dilation))
        if kind == "fprop":
            ty = graph.conv_fprop(image=ta, weight=tw, **window)
        elif kind == "dgrad":
            ty = graph.conv_dgrad(loss=ta, filter=tw, **window)
        else:  # wgrad: ``a`` the image, ``w`` the output's gradient
            ty = graph.conv_wgrad(image=ta, loss=tw, **window)
        ty.set_output(True).set_dim(list(shape)).set_stride(_contiguous_strides(shape))
        return graph, ta, tw, ty, self._build(graph)

    def forward(self, x: Any, w: Any, geometry: Any, groups: int) -> Any:
        """The convolution of ``x`` with ``w`` (cuDNN reads the groups from ``w``'s shape)."""
        kernel = w.shape[2:]
        out = tuple((s + lo + hi - d * (k - 1) - 1) // st + 1 for s, (lo, hi), d, k, st in
                    zip(x.shape[2:], geometry.padding, geometry.dilation, kernel,
                        geometry.stride))
        return self._convolution("fprop", x, w, geometry, (x.shape[0], w.shape[0], *out))

    def backward_data(self, dy: Any, w: Any, geometry: Any, groups: int,
                      spatial: tuple[int, ...]) -> Any:
        """The gradient of a convolution with ``w`` with respect to its input, of
        ``spatial`` dims, given the gradient ``dy`` of its output."""
        shape = (dy.shape[0], w.shape[1] * groups, *spatial)
        return self._convolution("dgrad", dy, w, geometry, shape)

    def backward_filter(self, x: Any, dy: Any, geometry: Any, groups: int,
                        kernel: tuple[int, ...]) -> Any:
        """The gradient of a convolution of ``x`` with respect to its filter, given the
        gradient ``dy`` of its output."""
        shape = (dy.shape[1], x.shape[1] // groups, *kernel)
        return self._convolution("wgrad", x, dy, geometry, shape)
