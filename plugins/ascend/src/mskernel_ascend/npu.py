"""The ``ascend`` backend: graphs compiled by ATC into offline models and run on the NPU
through ACL (:mod:`.offline`, :mod:`.acl`).

It is available only where CANN and an NPU are (:mod:`.probe`: pyACL, ``libascendcl.so``,
the device files; ATC to compile); everywhere else it is ``unavailable`` with what was not
found, and the partitioner never places a node on it.  Arrays live in host memory between
runs: each run copies its inputs to the device and its outputs back (the offline model owns
its device buffers).
"""

from __future__ import annotations

import os
from typing import Any, Optional, Sequence

import numpy as np
from mskernel_sdk import (
    Availability, Backend, BackendError, Capabilities, CompileOptions, DeviceArray, Executable,
    Graph, TensorType, as_storage,
)

from .capabilities import npu_capabilities
from .probe import CannProbe, probe

#: Overrides the SoC name ATC compiles for (default: what ACL reports for the device).
SOC_ENV = "MSKERNEL_ASCEND_SOC_VERSION"
#: The NPU a process uses (default 0).
DEVICE_ENV = "MSKERNEL_ASCEND_DEVICE_ID"


class AscendExecutable(Executable):
    def __init__(self, backend: "AscendBackend", graph: Graph, om_path: str) -> None:
        super().__init__(graph)
        from .acl import AclModel

        self.backend = backend
        self.model = AclModel(om_path, backend.device_id)
        self.outputs = [(np.dtype(v.type.dtype.storage), tuple(v.type.shape))
                        for v in graph.outputs]

    def run(self, args: Sequence[Any]) -> list[Any]:
        results = self.model.run([a.data for a in args], self.outputs)
        return [DeviceArray(self.backend, v.type, r) for v, r in zip(self.graph.outputs, results)]


class AscendBackend(Backend):
    """The NPU through CANN; see the module doc."""

    def __init__(self) -> None:
        self._probe: Optional[CannProbe] = None
        self.device_id = int(os.environ.get(DEVICE_ENV, "0"))

    @property
    def found(self) -> CannProbe:
        if self._probe is None:
            self._probe = probe()
        return self._probe

    def availability(self) -> Availability:
        found = self.found
        if found.runtime_ready and found.finding("atc").found:
            return Availability(available=True, reason=f"CANN at {found.toolkit_root}; "
                                                       f"{found.finding('NPU devices').detail}")
        missing = ", ".join(f.what for f in found.missing)
        details = "; ".join(str(f) for f in found.missing)
        present = [f.what for f in found.findings if f.found]
        return Availability(available=False, reason=(
            f"no Ascend NPU runtime: {missing} not found"
            + (f" (found: {', '.join(present)})" if present else "")
            + f". {details}. Ascend's numerics can be previewed on any machine with the "
              f"ascend-emulate backend"))

    def capabilities(self) -> Capabilities:
        return npu_capabilities()

    def to_device(self, host: np.ndarray, type: TensorType) -> DeviceArray:
        return DeviceArray(self, type, np.array(as_storage(host, type.dtype)))

    def to_host(self, array: DeviceArray) -> np.ndarray:
        return np.array(array.data)

    def soc_version(self) -> str:
        from .acl import soc_name

        return os.environ.get(SOC_ENV) or soc_name()

    def compile(self, graph: Graph, options: CompileOptions) -> Executable:
        from .offline import compile_offline
        from .precision import get_precision_mode

        availability = self.availability()
        if not availability.available:
            raise BackendError(f"backend 'ascend' is not available: {availability.reason}")
        atc = self.found.finding("atc").detail
        om = compile_offline(graph, self.soc_version(), get_precision_mode(), atc=atc)
        return AscendExecutable(self, graph, str(om))
