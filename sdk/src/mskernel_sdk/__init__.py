"""mskernel-sdk: everything a plugin author imports, in one place.

Plugins import only this module, the top-level ``mskernel`` package's public names
(``mskernel.jit``, the dtypes ``mskernel.float32`` …) and other plugins' user namespaces
(``mskernel.ops``, ``mskernel.nn`` …); a test fails on any other ``mskernel.*`` import in a
plugin.  The names in ``__all__`` are the plugin API, held by a snapshot test so that
changing one is a visible decision, and re-exported from wherever the core keeps them, so
the core can move its internals without breaking plugins.  Submodules (``kit``,
``template``, ...) are the SDK's implementation.

- the plugin contract: :data:`hookimpl`, :class:`PluginHooks` (the hookspecs as a Protocol,
  for type-checking implementations), :class:`PluginInfo`, :data:`PLUGIN_API_VERSION`,
  :func:`core_requirement`, and the types of the registries the hooks receive:
  :class:`OpRegistry`, :class:`RuleRegistry`, :class:`BackendRegistry`,
  :class:`PassRegistry`, :class:`NamespaceRegistry`, :class:`ModelReaderRegistry`,
  :class:`CommandRegistry`;
- errors: :class:`MskernelError` (the base of every mskernel error; a plugin's own errors
  derive from it), :class:`InferError`, :class:`OpError`, :class:`BackendError`,
  :class:`PluginError`, :class:`FileFormatError`;
- ops and the rules attached to them: :class:`OpDef`, :class:`Attr`, :class:`Emitter` (what
  an op's decomposition into other ops emits nodes through), :func:`op_registry`,
  :func:`rule_registry`, :func:`core_ops` (the core op set by trait), :data:`SAMPLES_RULE`;
  the building blocks of shape/dtype rules: :func:`require_tensor`, :func:`require_kind`,
  :func:`same_dtype`, :func:`normalize_axes`, :func:`reduced_shape`, :func:`widened`; the
  geometry of core ops that rules on them need: :class:`Window`, :func:`avg_divisors` and
  :func:`flat_positions` (convolution and pooling), :class:`EinsumTerm` and :func:`parse_einsum`;
- the IR: :class:`Graph`, :class:`Node`, :class:`Value`, :class:`GraphBuilder`,
  :class:`Type`, :class:`TensorType`, :class:`RefType`, :class:`TokenType`,
  :func:`tensor_type`, :class:`DType`, :func:`dtype`, :func:`as_storage`, :func:`verify`,
  and :class:`OpLookup`/:class:`OpSchema` (how it finds op definitions);
- files: :func:`save_model`, :func:`load_model` and :class:`Model` (the core's model file:
  a graph, its weights and the plugins it needs), :func:`read_model` (a model file of any
  registered format), :func:`write_atomically`;
- the backend interface: :class:`Backend`, :class:`Executable`, :class:`DeviceArray`,
  :class:`Availability`, :class:`Capabilities`, :class:`OpSupport`, :class:`CompileOptions`,
  :class:`RefCell`, :data:`TOKEN_VALUE`, :func:`compile_graph`;
- host kernels of a plugin's own ops: :class:`HostKernel`, :data:`HOST_KERNEL_RULE`, and the
  op trait :data:`SCHEDULE_EARLY` (an asynchronous start the partitioner runs as soon as it
  can, so that the rest of the graph overlaps its work);
- the data-parallel seam: :data:`DATA_PARALLEL_RULE`, :class:`DataParallelGroup`,
  :func:`data_parallel_group` (a training or data plugin asks whether this process is one of
  several data-parallel ranks);
- the training-transform seam: :data:`TRAINING_TRANSFORM_RULE`, :class:`TrainingSetup`,
  :func:`apply_training_transforms` (how a plugin changes what ``Model(amp_level=...,
  boost_level=...)`` trains: mixed precision, the Boost algorithms);
- passes (a backend's fusion, layout, memory planning): :class:`Pass`, :class:`PassContext`,
  :class:`PassResult`, :class:`PassManager`, :func:`run_pipeline`, :class:`PassReport`,
  :class:`PipelineResult`, :class:`Patterns`, :class:`Pat`, :class:`PatternPass`,
  :class:`Replacement`, :class:`Scope`, :data:`SHAPES`, :data:`FUSED_TRAIT`,
  :func:`make_node`, :func:`map_regions`, :func:`rewrite_nodes`;
- tensors and transforms (autodiff, batching, layers): :class:`Tensor`, :class:`Parameter`,
  :func:`apply` (apply an op to tensors, traced or eager), :func:`interpose` with
  :class:`Interposer` (see every op applied in a block) and :data:`ApplyResult`,
  :func:`active_trace`, :func:`outside_traces` (run ops eagerly while tracing: a layer's
  initial weights), :func:`trace_function`, :func:`converted_callee` (what graph-mode
  code calls for a user function), pytrees :func:`tree_flatten`, :func:`tree_unflatten`,
  :class:`TreeDef`;
- higher-order functions (a transform, a combinator): :func:`user_callables` declares the
  parameters that take user functions, which then run converted under ``@jit`` too;
  :func:`do_not_convert` marks a plugin's own function that it hands to ``jit`` (run as it
  is, never rewritten by graph mode's conversion);
- files of tensors: :class:`ContainerKind`, :func:`read_container`, :func:`write_container`
  (the core's atomic, pickle-free container, under a plugin's own magic),
  :func:`quote_name` (a name read from such a file, as its error messages quote it);
  for a plugin's own file format, :func:`write_atomically` and bfloat16's bit patterns
  :func:`bfloat16_to_bits`, :func:`bfloat16_from_bits`;
- test helpers: :func:`register_plugin`, :class:`OpSample`, :data:`SampleFn`,
  :func:`samples_for`, :func:`sample_graph`, :func:`random_array`, :func:`assert_close`,
  :func:`tolerance`, :func:`run_reference`, and :class:`VJPBuilder` (what an autodiff plugin
  gives the conformance kit);
- tolerances of results that accumulate: :func:`tolerance_for_reduction` (the error bound
  of a sum of ``n`` terms in any order), and what an op that sums attaches under
  :data:`ACCUMULATION_RULE` for the kit: a function of a sample returning its
  :class:`Accumulation` (terms per result element, their absolute values' sum, which
  :func:`on_magnitudes` computes for sums of products).
"""

from mskernel import PLUGIN_API_VERSION
from mskernel.errors import (
    BackendError, FileFormatError, InferError, MskernelError, OpError, PluginError,
)
from mskernel.frontend.autograph import do_not_convert, user_callables
from mskernel.frontend.autograph.conversion import converted_callee
from mskernel.frontend.dispatch import Interposer, Result as ApplyResult, apply, interpose
from mskernel.frontend.parameter import Parameter
from mskernel.frontend.pytree import TreeDef
from mskernel.frontend.pytree import flatten as tree_flatten, unflatten as tree_unflatten
from mskernel.frontend.tensor import Tensor
from mskernel.frontend.trace import trace_function
from mskernel.frontend.trace_context import active_trace, outside_traces
from mskernel.hooks import PluginInfo, hookimpl
from mskernel.hooks.protocol import PluginHooks
from mskernel.hooks.registries import CommandRegistry, ModelReaderRegistry, NamespaceRegistry
from mskernel.ir import (
    DType, Graph, GraphBuilder, Node, OpLookup, OpSchema, RefType, TensorType, TokenType, Type,
    Value, dtype, tensor_type, verify,
)
from mskernel.ir.container import (
    Kind as ContainerKind, quote_name, read_container, write_container,
)
from mskernel.ir.atomic import write_atomically
from mskernel.ir.fileformat import Model, load_model, save_model
from mskernel.ir.dtypes import as_storage, bfloat16_from_bits, bfloat16_to_bits
from mskernel.ops import Attr, OpDef, OpRegistry, RuleRegistry, op_registry, rule_registry
from mskernel.ops.conv import avg_divisors
from mskernel.ops.linalg import Term as EinsumTerm, parse_equation as parse_einsum
from mskernel.ops.registry import Emitter
from mskernel.ops.rules import (
    normalize_axes, reduced_shape, require_kind, same_dtype, tensor as require_tensor, widened,
)
from mskernel.ops.windows import Window, flat_positions
from mskernel.passes import (
    FUSED_TRAIT, SHAPES, Pass, PassContext, PassManager, PassRegistry, PassReport, PassResult, Pat,
    PatternPass, Patterns, PipelineResult, Replacement, Scope, make_node, map_regions,
    rewrite_nodes, run_pipeline,
)
from mskernel.runtime import (
    HOST_KERNEL_RULE, SCHEDULE_EARLY, TOKEN_VALUE, Availability, Backend, Capabilities,
    CompileOptions, DeviceArray, Executable, HostKernel, OpSupport, RefCell, compile_graph,
)
from mskernel.runtime.registry import BackendRegistry
from mskernel.testing import (
    ACCUMULATION_RULE, Accumulation, OpSample, SampleFn, assert_close, random_array,
    sample_graph, tolerance, tolerance_for_reduction,
)
from mskernel.testing.accumulation import on_magnitudes

from .data_parallel import DATA_PARALLEL_RULE, DataParallelGroup, data_parallel_group
from .kit.gradients import VJPBuilder
from .models import read_model
from .opset import core_ops
from .samples import SAMPLES_RULE, samples_for
from .testing import register_plugin, run_reference
from .training_transforms import (
    TRAINING_TRANSFORM_RULE, TrainingSetup, apply_training_transforms,
)
from .versioning import core_requirement

__version__ = "0.1.0"

__all__ = [
    "ACCUMULATION_RULE", "Accumulation", "ApplyResult", "Attr", "Availability", "Backend",
    "BackendError", "BackendRegistry", "Capabilities", "CommandRegistry", "CompileOptions",
    "ContainerKind", "DATA_PARALLEL_RULE", "DType", "DataParallelGroup", "DeviceArray",
    "EinsumTerm", "Emitter", "Executable", "FUSED_TRAIT", "FileFormatError", "Graph",
    "GraphBuilder", "HOST_KERNEL_RULE", "HostKernel", "InferError", "Interposer", "Model",
    "ModelReaderRegistry", "MskernelError", "NamespaceRegistry", "Node", "OpDef", "OpError",
    "OpLookup", "OpRegistry", "OpSample", "OpSchema", "OpSupport", "PLUGIN_API_VERSION",
    "Parameter", "Pass", "PassContext", "PassManager", "PassRegistry", "PassReport", "PassResult",
    "Pat", "PatternPass", "Patterns", "PipelineResult", "PluginError", "PluginHooks", "PluginInfo",
    "RefCell", "RefType", "Replacement", "RuleRegistry", "SAMPLES_RULE", "SCHEDULE_EARLY",
    "SHAPES", "SampleFn", "Scope", "TOKEN_VALUE", "TRAINING_TRANSFORM_RULE", "Tensor",
    "TensorType", "TokenType", "TrainingSetup", "TreeDef", "Type", "VJPBuilder", "Value", "Window",
    "active_trace", "apply", "apply_training_transforms", "as_storage", "assert_close",
    "avg_divisors", "bfloat16_from_bits", "bfloat16_to_bits", "compile_graph", "converted_callee",
    "core_ops", "core_requirement", "data_parallel_group", "do_not_convert", "dtype",
    "flat_positions", "hookimpl", "interpose", "load_model", "make_node", "map_regions",
    "normalize_axes", "on_magnitudes", "op_registry", "outside_traces", "parse_einsum",
    "quote_name", "random_array", "read_container", "read_model", "reduced_shape",
    "register_plugin", "require_kind", "require_tensor", "rewrite_nodes", "rule_registry",
    "run_pipeline", "run_reference", "same_dtype", "sample_graph", "samples_for", "save_model",
    "tensor_type", "tolerance", "tolerance_for_reduction", "trace_function", "tree_flatten",
    "tree_unflatten", "user_callables", "verify", "widened", "write_atomically", "write_container",
]
