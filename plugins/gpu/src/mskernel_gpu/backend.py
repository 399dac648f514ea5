"""The gpu backend: NVIDIA GPUs through CuPy, cuBLAS, cuDNN and kernels generated for NVRTC.

- Availability: :func:`.probe.probe` — the driver, its devices, CuPy and the CUDA libraries;
  the reason names what is missing and lists everything probed.
- Capabilities: the kernel table (:mod:`.kernels`) in every dtype (bfloat16 computed in
  float32), the fused op, and the ops a program runs itself (``constant``, ``ref_load``,
  ``ref_store``, ``If`` and ``While``).  :data:`.kernels.FALLBACK` lists the rest with the reason.  Capabilities are
  data, the same with or without a device, so ``mskernel plugins info gpu`` and ``explain``
  show the placement anywhere.
- Transfers: host to device through a pinned staging buffer, asynchronously on the copy
  stream; device to host into pinned memory, then waiting for the copy.
- Compilation: the pipeline ``gpu.O<opt_level>`` (:mod:`.passes`), then a
  :class:`~.executable.Program` on the executable's own stream (a CUDA graph from the second
  run where the program allows it, from opt level 2).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from mskernel_sdk import (
    Availability, Backend, BackendError, Capabilities, CompileOptions, DeviceArray, Graph,
    OpSupport, TensorType,
)

from .executable import GpuExecutable, Program, fused_launcher
from .fused_op import FUSED_OP
from .kernels import KERNELS
from .passes import optimize
from .probe import probe
from .storage import to_device_storage, to_host_storage

#: ops the program runs itself (control flow with its regions as programs of their own)
PROGRAM_OPS = ("constant", "ref_load", "ref_store", "If", "While")


class GpuBackend(Backend):
    name = "gpu"

    def __init__(self) -> None:
        self._device: Optional[Any] = None
        #: the event after the latest copy or program: the next one's stream waits for it, so
        #: work on the streams runs in the order it was issued, without blocking the host
        self.last_event: Optional[Any] = None
        self._capabilities = Capabilities(
            {op: OpSupport() for op in (*KERNELS, FUSED_OP, *PROGRAM_OPS)})

    def availability(self) -> Availability:
        found = probe()
        return Availability(available=found.available, reason=found.summary())

    def capabilities(self) -> Capabilities:
        return self._capabilities

    @property
    def device(self) -> Any:
        if self._device is None:
            found = probe()
            if not found.available:
                raise BackendError(f"backend 'gpu' is unavailable: {found.summary()}")
            from .device import device

            self._device = device()
        return self._device

    def to_device(self, host: np.ndarray, type: TensorType) -> DeviceArray:
        """Staged through pinned memory and copied asynchronously on the copy stream (the
        staging buffer lives until the copy's event has passed)."""
        device = self.device
        staged = to_device_storage(np, host, type.dtype)
        pinned = device.pinned_like(staged)
        with device.copy_stream:  # allocated on the stream that writes it
            data = device.cupy.empty(staged.shape, staged.dtype)
            self.wait_for_previous(device.copy_stream)
            data.set(pinned, stream=device.copy_stream)
            self.last_event = device.copy_stream.record()
        device.keep_until(self.last_event, pinned)
        return DeviceArray(self, type, data)

    def to_host(self, array: DeviceArray) -> np.ndarray:
        device = self.device
        pinned = device.pinned_empty(array.data.shape, array.data.dtype)
        with device.copy_stream:
            self.wait_for_previous(device.copy_stream)
            array.data.get(stream=device.copy_stream, out=pinned)
            device.copy_stream.synchronize()
        return to_host_storage(pinned, array.type.dtype)

    def wait_for_previous(self, stream: Any) -> None:
        if self.last_event is not None:
            stream.wait_event(self.last_event)

    def synchronize(self, array: DeviceArray) -> None:
        if self.last_event is not None:
            self.last_event.synchronize()

    def compile(self, graph: Graph, options: CompileOptions) -> GpuExecutable:
        device = self.device
        result = optimize(graph, options)
        program = Program(result.graph, device.lib, fused_launcher(device))
        return GpuExecutable(self, graph, result.graph, program, report=result.report,
                             graphs=options.opt_level >= 2)

    def describe(self) -> str:
        """What was probed, and once the device is in use, what its libraries refused."""
        lines = probe().lines()
        if self._device is not None:
            lines += self._device.notes
            conv = self._device.lib.conv
            if conv is not None:
                lines.append(f"cuDNN: {len(conv.plans)} plan(s), {len(conv.refused)} case(s) "
                             "without an engine (run as im2col)")
        return "\n".join(lines)
