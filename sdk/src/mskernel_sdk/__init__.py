"""mskernel-sdk: everything a plugin author imports, in one place.

Plugins import only this module; the names in ``__all__`` are the plugin API, held by a
snapshot test so that changing one is a visible decision.  Submodules (``kit``,
``template``, ...) are the SDK's implementation.

- errors: :class:`MskernelError` (the base of every mskernel error; a plugin's own errors
  derive from it), :class:`InferError`, :class:`PluginError`, :class:`FileFormatError`;
- the plugin contract: :data:`hookimpl`, :class:`PluginInfo`, :data:`PLUGIN_API_VERSION`,
  :func:`core_requirement`;
- ops and the rules attached to them: :class:`OpDef`, :class:`Attr`, :class:`InferError`,
  :func:`op_registry`, :func:`rule_registry`, :data:`SAMPLES_RULE`;
- the IR: :class:`Graph`, :class:`Node`, :class:`Value`, :class:`GraphBuilder`,
  :class:`TensorType`, :class:`RefType`, :class:`TokenType`, :func:`tensor_type`,
  :class:`DType`, :func:`dtype`, :func:`as_storage`, and :class:`OpLookup`/:class:`OpSchema`
  (how it finds op definitions);
- tensors: :class:`Tensor`, :class:`Parameter`, :func:`apply` (apply an op to tensors,
  traced or eager), pytrees :func:`tree_flatten` and :func:`tree_unflatten`;
- files: :func:`save_model`, :func:`load_model` and :class:`Model` (the core's model file:
  a graph, its weights and the plugins it needs), :func:`read_model` (a model file of any
  registered format), :func:`write_atomically`;
- the backend interface: :class:`Backend`, :class:`Executable`, :class:`DeviceArray`,
  :class:`Availability`, :class:`Capabilities`, :class:`OpSupport`, :class:`CompileOptions`,
  :class:`RefCell`, :data:`TOKEN_VALUE`, :func:`compile_graph`;
- host kernels of a plugin's own ops: :class:`HostKernel`, :data:`HOST_KERNEL_RULE`;
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
from mskernel.errors import FileFormatError, InferError, MskernelError, PluginError
from mskernel.frontend.autograph import user_callables
from mskernel.frontend.dispatch import apply
from mskernel.frontend.parameter import Parameter
from mskernel.frontend.pytree import flatten as tree_flatten, unflatten as tree_unflatten
from mskernel.frontend.tensor import Tensor
from mskernel.hooks import PluginInfo, hookimpl
from mskernel.ir import (
    DType, Graph, GraphBuilder, Node, OpLookup, OpSchema, RefType, TensorType, TokenType, Value,
    dtype, tensor_type,
)
from mskernel.ir.atomic import write_atomically
from mskernel.ir.dtypes import as_storage
from mskernel.ir.fileformat import Model, load_model, save_model
from mskernel.ops import Attr, OpDef, op_registry, rule_registry
from mskernel.passes import (
    FUSED_TRAIT, SHAPES, Pass, PassContext, PassManager, PassResult, Pat, PatternPass, Patterns,
    Replacement, Scope, make_node, map_regions, run_pipeline,
)
from mskernel.runtime import (
    HOST_KERNEL_RULE, TOKEN_VALUE, Availability, Backend, Capabilities, CompileOptions,
    DeviceArray, Executable, HostKernel, OpSupport, RefCell, compile_graph,
)
from mskernel.testing import OpSample, assert_close, random_array, sample_graph, tolerance

from .kit.gradients import VJPBuilder
from .models import read_model
from .samples import SAMPLES_RULE, samples_for
from .testing import register_plugin, run_reference
from .versioning import core_requirement

__version__ = "0.1.0"

__all__ = [
    "Attr", "Availability", "Backend", "Capabilities", "CompileOptions", "DType", "DeviceArray",
    "Executable", "FUSED_TRAIT", "FileFormatError", "Graph", "GraphBuilder", "HOST_KERNEL_RULE",
    "HostKernel", "InferError", "Model", "MskernelError", "Node", "OpDef", "OpLookup", "OpSample",
    "OpSchema", "OpSupport", "PLUGIN_API_VERSION", "Parameter", "Pass", "PassContext",
    "PassManager", "PassResult", "Pat", "PatternPass", "Patterns", "PluginError", "PluginInfo",
    "RefCell", "RefType", "Replacement", "SAMPLES_RULE", "SHAPES", "Scope", "TOKEN_VALUE",
    "Tensor", "TensorType", "TokenType", "VJPBuilder", "Value", "apply", "as_storage",
    "assert_close", "compile_graph", "core_requirement", "dtype", "hookimpl", "load_model",
    "make_node", "map_regions", "op_registry", "random_array", "read_model", "register_plugin",
    "rule_registry", "run_pipeline", "run_reference", "sample_graph", "samples_for", "save_model",
    "tensor_type", "tolerance", "tree_flatten", "tree_unflatten", "user_callables",
    "write_atomically",
]
