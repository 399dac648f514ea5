"""The cpu backend: kernels in C++ on host memory.

- Storage: ``DeviceArray.data`` is a C-contiguous, 64-byte aligned NumPy array in device
  storage (bfloat16 as 2-byte bit patterns; see :mod:`.storage`): host memory, so feature
  plugins' host kernels run beside the plans with no transfer.
- Capabilities: exactly the ops with a registered C++ kernel, with the dtypes each accepts, plus
  the ops the plan runs itself (``If``, ``While``, ``ref_load``, ``ref_store``, ``constant``,
  and the reshapes ``reshape``, ``squeeze``, ``expand_dims``: every dtype).
  Everything else falls back to another backend (``mskernel plugins info cpu`` lists them).
- Compilation: the pipeline ``cpu.O<opt_level>`` (:mod:`.passes`: GEMM epilogue fusion,
  transpose folding, elementwise fusion) runs first; then
  :class:`~.executable.CpuExecutable` lowers the result once into a native plan with a
  memory-planned arena (reshapes as views from opt level 1); running it is one call into C++.
  Lowering trusts no node: each kernel is prepared behind its op's rule
  (:func:`.native.check_node_types`) and the plan checks every buffer a step touches, so a
  hand-built graph that breaks a rule raises instead of reaching the kernels.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from mskernel import bfloat16
from mskernel_sdk import (
    Availability, Backend, Capabilities, CompileOptions, DeviceArray, Graph, OpSupport, TensorType,
    dtype as to_dtype,
)

from .executable import CpuExecutable
from .fusion_codegen import target_isa
from .lowering import PLAN_OPS, VIEW_OPS
from .memory import ALIGNMENT
from .native import NativeUnavailable, load
from .passes import optimize
from .storage import device_dtype, to_device_data, to_host_data


class CpuBackend(Backend):
    name = "cpu"
    host_memory = True

    def __init__(self) -> None:
        self._capabilities: Optional[Capabilities] = None

    def availability(self) -> Availability:
        try:
            native = load()
        except NativeUnavailable as exc:
            return Availability(available=False, reason=str(exc))
        return Availability(available=True, reason=(
            f"{native.num_threads()} thread(s), {native.compiled_isa()} kernels, "
            f"{target_isa()} generated kernels, {native.blas_info()}"))

    def capabilities(self) -> Capabilities:
        if self._capabilities is None:
            try:
                table = load().kernel_table()
            except NativeUnavailable:
                return Capabilities({})
            ops = {op: OpSupport(dtypes=frozenset(to_dtype(name) for name in names))
                   for op, names in table}
            ops.update({op: OpSupport() for op in (*PLAN_OPS, *VIEW_OPS)})
            self._capabilities = Capabilities(ops)
        return self._capabilities

    def to_device(self, host: np.ndarray, type: TensorType) -> DeviceArray:
        return DeviceArray(self, type, to_device_data(host, type.dtype))

    def to_host(self, array: DeviceArray) -> np.ndarray:
        return to_host_data(array.data, array.type.dtype)

    def share(self, host: np.ndarray, type: TensorType) -> Optional[DeviceArray]:
        """``host`` itself when it is already device storage: the dtype's own (not
        bfloat16), C-contiguous and 64-byte aligned, as the kernels take their operands."""
        if (type.dtype is bfloat16 or host.dtype != device_dtype(type.dtype)
                or not host.flags.c_contiguous or host.ctypes.data % ALIGNMENT):
            return None
        return DeviceArray(self, type, host)

    def compile(self, graph: Graph, options: CompileOptions) -> CpuExecutable:
        result = optimize(graph, options)
        return CpuExecutable(self, graph, result.graph, report=result.report,
                             views=options.opt_level >= 1)
