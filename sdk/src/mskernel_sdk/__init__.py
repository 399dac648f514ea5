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
- passes (a backend's fusion, layout, memory planning): :class:`Pass`, :class:`PassContext`,
  :class:`PassResult`, :class:`PassManager`, :class:`Patterns`, :class:`PatternPass`,
  :func:`make_node`;
- higher-order functions (a transform, a combinator): :func:`user_callables` declares the
  parameters that take user functions, which then run converted under ``@jit`` too;
- test helpers: :func:`register_plugin`, :class:`OpSample`, :func:`samples_for`,
  :func:`sample_graph`, :func:`random_array`, :func:`assert_close`, :func:`tolerance`,
  :func:`run_reference`, and :class:`VJPBuilder` (what an autodiff plugin gives the
  conformance kit).
"""

from mskernel import PLUGIN_API_VERSION
from mskernel.errors import InferError, PluginError
from mskernel.frontend.autograph import user_callables
from mskernel.hooks import PluginInfo, hookimpl
from mskernel.ir import (
    DType, Graph, GraphBuilder, Node, OpLookup, OpSchema, TensorType, Value, dtype, tensor_type,
)
from mskernel.ir.dtypes import as_storage
from mskernel.ops import Attr, OpDef, op_registry, rule_registry
from mskernel.passes import (
    Pass, PassContext, PassManager, PassResult, PatternPass, Patterns, make_node,
)
from mskernel.runtime import (
    TOKEN_VALUE, Availability, Backend, Capabilities, CompileOptions, DeviceArray, Executable,
    OpSupport, RefCell, compile_graph,
)
from mskernel.testing import OpSample, assert_close, random_array, sample_graph, tolerance

from .kit.gradients import VJPBuilder
from .samples import SAMPLES_RULE, samples_for
from .testing import register_plugin, run_reference
from .versioning import core_requirement

__version__ = "0.1.0"

__all__ = [
    "Attr", "Availability", "Backend", "Capabilities", "CompileOptions", "DType", "DeviceArray",
    "Executable", "Graph", "GraphBuilder", "InferError", "Node", "OpDef", "OpLookup",
    "OpSample", "OpSchema",
    "OpSupport", "PLUGIN_API_VERSION", "Pass", "PassContext", "PassManager", "PassResult",
    "PatternPass", "Patterns", "PluginError", "PluginInfo", "RefCell", "SAMPLES_RULE",
    "TOKEN_VALUE", "TensorType", "VJPBuilder", "Value", "as_storage", "assert_close",
    "compile_graph", "core_requirement", "dtype", "hookimpl", "make_node", "op_registry",
    "random_array", "register_plugin", "rule_registry", "run_reference", "sample_graph",
    "samples_for", "tensor_type", "tolerance", "user_callables",
]
