"""mskernel-sdk: everything a plugin author imports, in one place.

Plugins import only this module; the names in ``__all__`` are the plugin API, held by a
snapshot test so that changing one is a visible decision.  Submodules (``kit``,
``template``, ...) are the SDK's implementation.

- the plugin contract: :data:`hookimpl`, :class:`PluginInfo`, :data:`PLUGIN_API_VERSION`,
  :func:`core_requirement`;
- ops and the rules attached to them: :class:`OpDef`, :class:`Attr`, :class:`InferError`,
  :func:`op_registry`, :func:`rule_registry`, :data:`SAMPLES_RULE`;
- the IR: :class:`Graph`, :class:`Node`, :class:`Value`, :class:`GraphBuilder`,
  :class:`TensorType`, :func:`tensor_type`, :class:`DType`, :func:`dtype`,
  :func:`as_storage`, and :class:`OpLookup`/:class:`OpSchema` (how it finds op definitions);
- the backend interface: :class:`Backend`, :class:`Executable`, :class:`DeviceArray`,
  :class:`Availability`, :class:`Capabilities`, :class:`OpSupport`, :class:`CompileOptions`,
  :class:`RefCell`, :data:`TOKEN_VALUE`, :func:`compile_graph`;
- host kernels of a plugin's own ops: :class:`HostKernel`, :data:`HOST_KERNEL_RULE`;
- tensors: :class:`Tensor` and :func:`apply` (apply an op to tensors, eager or traced; an
  effectful op's token is the trace's), for plugins whose user functions apply ops;
- the data-parallel seam: :data:`DATA_PARALLEL_RULE`, :class:`DataParallelGroup`,
  :func:`data_parallel_group` (a training plugin asks whether it runs on several ranks);
- shape/dtype rule helpers: :func:`require_tensor`, :func:`require_kind`; errors:
  :class:`MskernelError` (the base of every mskernel error);
- passes (a backend's fusion, layout, memory planning): :class:`Pass`, :class:`PassContext`,
  :class:`PassResult`, :class:`PassManager`, :func:`run_pipeline`, :class:`Patterns`,
  :class:`Pat`, :class:`PatternPass`, :class:`Replacement`, :class:`Scope`,
  :data:`SHAPES`, :data:`FUSED_TRAIT`, :func:`make_node`, :func:`map_regions`;
- higher-order functions (a transform, a combinator): :func:`user_callables` declares the
  parameters that take user functions, which then run converted under ``@jit`` too;
- test helpers: :func:`register_plugin`, :class:`OpSample`, :func:`samples_for`,
  :func:`sample_graph`, :func:`random_array`, :func:`assert_close`, :func:`tolerance`,
  :func:`run_reference`, and :class:`VJPBuilder` (what an autodiff plugin gives the
  conformance kit).
"""

from mskernel import PLUGIN_API_VERSION
from mskernel.errors import InferError, MskernelError, PluginError
from mskernel.frontend.autograph import user_callables
from mskernel.frontend.dispatch import apply
from mskernel.frontend.tensor import Tensor
from mskernel.hooks import PluginInfo, hookimpl
from mskernel.ir import (
    DType, Graph, GraphBuilder, Node, OpLookup, OpSchema, TensorType, TokenType, Value, dtype,
    tensor_type,
)
from mskernel.ir.dtypes import as_storage
from mskernel.ops import Attr, OpDef, op_registry, rule_registry
from mskernel.ops.rules import require_kind, tensor as require_tensor
from mskernel.passes import (
    FUSED_TRAIT, SHAPES, Pass, PassContext, PassManager, PassResult, Pat, PatternPass, Patterns,
    Replacement, Scope, make_node, map_regions, run_pipeline,
)
from mskernel.runtime import (
    HOST_KERNEL_RULE, TOKEN_VALUE, Availability, Backend, Capabilities, CompileOptions,
    DeviceArray, Executable, HostKernel, OpSupport, RefCell, compile_graph,
)
from mskernel.testing import OpSample, assert_close, random_array, sample_graph, tolerance

from .data_parallel import DATA_PARALLEL_RULE, DataParallelGroup, data_parallel_group
from .kit.gradients import VJPBuilder
from .samples import SAMPLES_RULE, samples_for
from .testing import register_plugin, run_reference
from .versioning import core_requirement

__version__ = "0.1.0"

__all__ = [
    "Attr", "Availability", "Backend", "Capabilities", "CompileOptions", "DATA_PARALLEL_RULE",
    "DType", "DataParallelGroup", "DeviceArray", "Executable", "FUSED_TRAIT", "Graph",
    "GraphBuilder", "HOST_KERNEL_RULE", "HostKernel", "InferError", "MskernelError", "Node",
    "OpDef", "OpLookup", "OpSample", "OpSchema", "OpSupport", "PLUGIN_API_VERSION", "Pass",
    "PassContext", "PassManager", "PassResult", "Pat", "PatternPass", "Patterns", "PluginError",
    "PluginInfo", "RefCell", "Replacement", "SAMPLES_RULE", "SHAPES", "Scope", "TOKEN_VALUE",
    "Tensor", "TensorType", "TokenType", "VJPBuilder", "Value", "apply", "as_storage",
    "assert_close", "compile_graph", "core_requirement", "data_parallel_group", "dtype",
    "hookimpl", "make_node", "map_regions", "op_registry", "random_array", "register_plugin",
    "require_kind", "require_tensor", "rule_registry", "run_pipeline", "run_reference",
    "sample_graph", "samples_for", "tensor_type", "tolerance", "user_callables",
]
