"""The module named by the ``mskernel.plugins`` entry point ``parallel``: registers the
collective ops with their host kernels, derivative rules and samples, the sharding rules of
the core's ops and the strategy constraint op, the data-parallel provider that mskernel-nn and
mskernel-data consult, the namespaces ``mskernel.communication``, ``mskernel.parallel`` and
``mskernel.shard``, MindSpore's communication primitives as
``mskernel.ops.AllReduce`` and the others, and ``mskernel run``.  Importing it
loads neither MPI nor the rest of the plugin."""

from __future__ import annotations

from mskernel_sdk import DATA_PARALLEL_RULE, HOST_KERNEL_RULE, SAMPLES_RULE, PluginInfo, hookimpl

from . import __version__

#: MindSpore's communication primitives, ``mskernel.ops.<name>`` (:mod:`.primitives`)
PRIMITIVES = ("AllGather", "AllReduce", "AlltoAll", "Broadcast", "NeighborExchange", "Receive",
              "ReduceOp", "ReduceScatter", "Send")


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(
        name="parallel", version=__version__, kind="library",
        provides=["namespace:communication", "namespace:parallel", "namespace:shard",
                  *(f"namespace:ops.{name}" for name in PRIMITIVES), "ops:parallel.*",
                  "rules:parallel.*", "rules:sharding", "host_kernels:parallel.*",
                  "command:run", f"rules:{DATA_PARALLEL_RULE}"],
        description="distributed training on MPI: collectives, data parallel, parameter "
                    "server, the mskernel run launcher")


@hookimpl
def mskernel_register_ops(registry) -> None:
    from .ops import OPS
    from .sharding.constraint import OP as SHARDING_CONSTRAINT

    registry.define_all([*OPS, SHARDING_CONSTRAINT])


@hookimpl
def mskernel_register_rules(rules) -> None:
    from .data_parallel import PROVIDER
    from .ops import HOST_KERNELS
    from .rules import RULES
    from .samples import SAMPLES
    from .sharding import constraint, rules as sharding

    for op, kernel in {**HOST_KERNELS, **constraint.HOST_KERNELS}.items():  # beside any backend
        rules.register(HOST_KERNEL_RULE, op, kernel)
    for kind, op, rule in [*RULES, *constraint.RULES]:  # read by mskernel-autodiff
        rules.register(kind, op, rule)
    for op, rule in sharding.rules():  # read by the sharding propagation
        rules.register(sharding.SHARDING_RULE, op, rule)
    for op, samples in SAMPLES.items():  # read by mskernel-sdk's conformance kit
        rules.register(SAMPLES_RULE, op, samples)
    rules.register(DATA_PARALLEL_RULE, "parallel", PROVIDER)  # read by mskernel-nn, -data


@hookimpl
def mskernel_register_namespaces(namespaces) -> None:
    namespaces.register("communication", "mskernel_parallel.communication")
    namespaces.register("parallel", "mskernel_parallel.api")
    namespaces.register("shard", "mskernel_parallel.sharding.constraint:shard")
    for name in PRIMITIVES:
        namespaces.register(f"ops.{name}", f"mskernel_parallel.primitives:{name}")


@hookimpl
def mskernel_add_cli(commands) -> None:
    from .launcher import configure, main

    commands.add("run", "run a script on N ranks (processes) with MPI", configure, main)
