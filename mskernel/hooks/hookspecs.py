"""The plugin author's contract: every hook a plugin may implement.

A plugin is a Python module (or object) with functions named after these hooks and decorated
with ``mskernel.hooks.hookimpl``; it is published as a distribution with one entry point in
the group ``mskernel.plugins``::

    [project.entry-points."mskernel.plugins"]
    cpu = "mskernel_cpu.plugin"

Lifecycle.  ``import mskernel`` reads no plugin code.  Discovery reads the entry points and
the distribution metadata only; the core's version is checked against the distribution's
``Requires-Dist: mskernel ...`` requirement *before* the module is imported (an incompatible
plugin is reported, never imported).  On first use — the first backend lookup, namespace
access, unknown op name or ``mskernel plugins`` command — each enabled plugin is imported and
its registration hooks are called once, in this order::

    mskernel_plugin_info        describe
    mskernel_register_ops       define ops
    mskernel_register_rules     attach rules to ops (autodiff, sharding, cost, ...)
    mskernel_register_backends  add backend factories
    mskernel_register_passes    add passes and pipelines
    mskernel_register_namespaces  expose mskernel.<name>
    mskernel_register_model_readers  read model file formats
    mskernel_add_cli            add mskernel sub-commands (only when the CLI runs)

A plugin whose import or hook raises — any exception, ``SystemExit`` from ``sys.exit()``
included; only a real Ctrl-C stops the program — is marked ``broken`` with the reason and its
traceback (shown by ``mskernel plugins list``, ``info`` and ``check``).  Everything its
registration hooks registered is then taken out again: its ops, rules, backends, passes,
pipelines and namespaces are gone, and a core op it overrode is the core's again.  Its later
hooks are not called; the core and the other plugins go on.  (A failing ``mskernel_add_cli``
withdraws the plugin's commands only.)  Each registry a hook receives is *scoped* to the
calling plugin: what it defines is recorded as owned by the plugin's distribution.

Every hook is called once per plugin with keyword arguments; an implementation may accept a
subset of the arguments listed (pluggy's rule).  Return values are ignored except where a hook
says otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .markers import hookspec

if TYPE_CHECKING:
    from ..ops.registry import OpRegistry, RuleRegistry
    from ..passes.registry import PassRegistry
    from ..runtime.registry import BackendRegistry
    from .info import PluginInfo
    from .registries import CommandRegistry, ModelReaderRegistry, NamespaceRegistry


# ---------------------------------------------------------------------------------------------
# describe
# ---------------------------------------------------------------------------------------------


@hookspec
def mskernel_plugin_info() -> "PluginInfo":
    """Describe this plugin.

    Return a :class:`mskernel.hooks.PluginInfo`: ``name`` (normally the entry-point name),
    ``version`` (normally the distribution's), ``kind`` (``"backend"``, ``"transform"`` or
    ``"library"``), ``provides`` (short tags such as ``"backend:cpu"``, ``"namespace:nn"``,
    ``"ops:quantum.*"``) and a one-line ``description``.  Optional: a plugin without it is
    described from its distribution metadata.  Must be cheap and must not touch hardware.
    """


# ---------------------------------------------------------------------------------------------
# build: ops and the rules attached to them
# ---------------------------------------------------------------------------------------------


@hookspec
def mskernel_register_ops(registry: "OpRegistry") -> None:
    """Define this plugin's ops with ``registry.define(OpDef(...))``.

    An op is defined once: inputs, attribute schema, shape/dtype rule and NumPy reference
    semantics (see :class:`mskernel.ops.OpDef`), and optionally a decomposition into other
    ops, which a backend that does not claim the op runs instead (``docs/ops.md``).  Prefix
    op names with the plugin's name
    (``"quantum.expectation"``).  Redefining an existing op is an error unless
    ``override=True`` is passed; overrides are listed by ``mskernel plugins info``.
    """


@hookspec
def mskernel_register_rules(rules: "RuleRegistry") -> None:
    """Attach rules to ops by name with ``rules.register(kind, op_name, rule)``.

    ``kind`` is an open string agreed between the plugin that reads the rule and those that
    provide it: the autodiff plugin reads ``"vjp"`` and ``"jvp"`` (derivatives) and
    ``"batch"`` (``vmap``'s batching rules, with ``"not_batchable"`` for an op that cannot
    have one), mskernel-parallel reads ``"sharding"`` (how the op's operands and results may
    be split over ranks: ``rule(input_types, attrs)`` returns a ``mskernel.parallel.OpSharding``
    naming each dimension with a letter; an op without one runs replicated), mskernel-onnx
    reads ``"onnx_export"`` (how to write the op as ONNX).  A plugin may attach rules to ops
    it does not own (autodiff attaches the core ops' derivatives) and to its own ops for a
    transform it does not implement.

    The core reads the kind ``"host_kernel"`` (``mskernel.runtime.HOST_KERNEL_RULE``): a
    plugin that defines ops of its own and computes them on the CPU (quantum, federated,
    science, reinforcement) registers ``HostKernel(fn, dtypes=...)`` for each, and its nodes
    run on the host *beside* whichever backend runs the rest of the graph, with no fallback
    warning and, on a host-memory backend (cpu, reference), no transfer.  ``fn(*arrays,
    **attrs)`` receives NumPy arrays in reference storage (read-only) and the node's
    attributes, and returns an array per output (a tuple when there are several), as an op's
    reference semantics does; see :mod:`mskernel.runtime.host_kernels`.
    """


# ---------------------------------------------------------------------------------------------
# lower and execute: backends
# ---------------------------------------------------------------------------------------------


@hookspec
def mskernel_register_backends(backends: "BackendRegistry") -> None:
    """Add backend factories with ``backends.register(name, factory, priority=...)``.

    ``factory()`` returns a :class:`mskernel.runtime.Backend`; it is called when the backend
    is first needed and must not raise when hardware is missing — the backend reports that
    through ``availability()``.  Higher ``priority`` is preferred; users override the order
    with ``MSKERNEL_BACKENDS=gpu,cpu``.  Names are open strings; two plugins registering the
    same backend name is an error naming both.
    """


# ---------------------------------------------------------------------------------------------
# transform: passes and pipelines
# ---------------------------------------------------------------------------------------------


@hookspec
def mskernel_register_passes(passes: "PassRegistry") -> None:
    """Add passes (``passes.register(pass_object)``) and named pipelines
    (``passes.register_pipeline(name, [pass names])``).  The pass manager repeats a pipeline
    until nothing changes, up to a number of sweeps set by the optimisation level.

    A pass implements :class:`mskernel.passes.Pass`: ``run(graph, context) -> PassResult``
    and must not change what the graph computes.  Backend-specific passes (fusion, layout,
    memory planning) are registered here too and run by the backend's ``compile`` through the
    same :class:`mskernel.passes.PassManager`.
    """


# ---------------------------------------------------------------------------------------------
# user surface
# ---------------------------------------------------------------------------------------------


@hookspec
def mskernel_register_namespaces(namespaces: "NamespaceRegistry") -> None:
    """Expose user namespaces with ``namespaces.register("nn", "mskernel_nn.api")``.

    ``mskernel.nn`` then imports and returns that module on first access.  A target of the
    form ``"module:attribute"`` exposes one object (``namespaces.register("grad",
    "mskernel_autodiff.api:grad")`` makes ``mskernel.grad`` that function).  Targets are strings
    so nothing is imported before the user asks for it.  A dotted name adds a member to
    another plugin's namespace (``"nn.probability"``) or to a core namespace open to plugins
    (``"common.initializer"``, ``"ops.stop_gradient"``; the core's own members come first);
    ``import mskernel.common.initializer`` works like the attribute.  A name no installed plugin
    provides is an error naming the distribution to install when the project has one.
    """


@hookspec
def mskernel_register_model_readers(readers: "ModelReaderRegistry") -> None:
    """Read a model file format with ``readers.register(format, read, suffixes=(...),
    magic=b"...")``.

    ``read(path)`` returns a :class:`mskernel.ir.Model` (the graph; its weights, keyed by the
    names of the graph inputs they feed) and raises
    :class:`~mskernel.errors.FileFormatError` naming the file for anything it cannot read.
    A file is matched by its first bytes (``magic``) and, failing that, by its suffix
    (``".onnx"``).  ``mskernel explain``, ``mskernel.load`` and converters read every
    registered format; the core registers its own model file as ``"mindir"``.
    """


@hookspec
def mskernel_add_cli(commands: "CommandRegistry") -> None:
    """Add ``mskernel <name>`` sub-commands with ``commands.add(name, help, configure, run)``.

    ``configure(parser)`` adds arguments to an ``argparse`` sub-parser; ``run(args)`` performs
    the command and returns the process exit code.  Called only when the CLI starts.
    """
