"""Executor interfaces, the partitioner, the reference backend, and compiling/running graphs.

Backend authors implement :class:`Backend` and :class:`Executable`; feature plugins give
their own ops a :class:`HostKernel`; users call :func:`compile_graph` (or the frontend does)
and :func:`explain` to see placement.
"""

from .backend import (
    Availability, Backend, Capabilities, CompileOptions, DeviceArray, Executable, OpSupport,
)
from .executor import CompiledGraph, compile_graph, explain
from .host_kernels import HOST_KERNEL_RULE, HostKernel
from .partition import SCHEDULE_EARLY, FallbackWarning, PartitionPlan, partition
from .state import TOKEN_VALUE, RefCell

__all__ = [
    "Availability", "Backend", "Capabilities", "CompileOptions", "CompiledGraph", "DeviceArray",
    "Executable", "FallbackWarning", "HOST_KERNEL_RULE", "HostKernel", "OpSupport",
    "PartitionPlan", "RefCell", "SCHEDULE_EARLY", "TOKEN_VALUE", "compile_graph", "explain",
    "partition",
]
