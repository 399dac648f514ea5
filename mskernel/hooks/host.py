"""The plugin host: one per process.  It owns the registries, registers the built-in plugins,
and loads external plugins on first use, recording the health of each.

Built-in plugins (the core op set, the reference backend, the generic passes) register through
the same hooks as external ones.  External plugins are found by :mod:`.discovery` from metadata
alone; they are imported only when :meth:`PluginHost.load_external` runs — on the first backend
lookup, namespace access, unknown op name, or ``mskernel plugins`` command.
"""

from __future__ import annotations

import threading
import traceback
from importlib import import_module
from typing import Any, Callable, Optional

import pluggy

from .. import __version__
from ..errors import MissingPluginError
from ..ops.registry import OpRegistry, RuleRegistry
from ..passes.registry import PassRegistry
from ..runtime.registry import BackendRegistry
from . import hookspecs
from .discovery import Candidate, discover, disabled_names, incompatibility, is_disabled
from .info import PluginInfo, PluginRecord
from .markers import PROJECT
from .registries import CommandRegistry, NamespaceRegistry, Scoped

CORE = "mskernel"

#: Built-in plugin modules, registered at start-up in this order.
BUILTIN_PLUGINS = (
    "mskernel.ops.core",
    "mskernel.runtime.reference",
    "mskernel.passes.generic",
)

# Registration hooks in lifecycle order: (hook name, keyword, registry attribute, stamped methods)
_REGISTRATION = (
    ("mskernel_register_ops", "registry", "ops", ("define", "define_all")),
    ("mskernel_register_rules", "rules", "rules", ("register",)),
    ("mskernel_register_backends", "backends", "backends", ("register",)),
    ("mskernel_register_passes", "passes", "passes", ("register", "register_pipeline")),
    ("mskernel_register_namespaces", "namespaces", "namespaces", ("register",)),
)


class PluginHost:
    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.ops = OpRegistry(loader=self.load_external)
        self.rules = RuleRegistry()
        self.backends = BackendRegistry()
        self.passes = PassRegistry()
        self.namespaces = NamespaceRegistry()
        self.records: dict[str, PluginRecord] = {}
        self._commands: Optional[CommandRegistry] = None
        self._external_loaded = False
        self._lock = threading.RLock()
        for module_name in BUILTIN_PLUGINS:
            module = import_module(module_name)
            record = self.register(module, name=module_name.rsplit(".", 1)[-1],
                                   distribution=CORE, version=__version__, record=False)
            if record.status != "ok":  # a built-in failing is a bug in the core itself
                raise RuntimeError(f"built-in plugin {module_name} failed: {record.detail}")

    # -- loading -----------------------------------------------------------------------------

    def load_external(self) -> None:
        """Import and register every enabled, compatible discovered plugin (once)."""
        with self._lock:
            if self._external_loaded:
                return
            self._external_loaded = True
            disabled = disabled_names()
            for candidate in discover():
                self._load_candidate(candidate, disabled)

    def _load_candidate(self, candidate: Candidate, disabled: set[str]) -> None:
        base = dict(name=candidate.name, distribution=candidate.distribution,
                    version=candidate.version)
        if is_disabled(candidate, disabled):
            self.records[candidate.name] = PluginRecord(
                **base, status="disabled", reason="switched off by MSKERNEL_DISABLE_PLUGINS")
            return
        reason = incompatibility(candidate, __version__)
        if reason:
            self.records[candidate.name] = PluginRecord(**base, status="incompatible", reason=reason)
            return
        try:
            plugin = candidate.entry_point.load()
        except BaseException as exc:  # noqa: BLE001 - a plugin's import may raise anything
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            self.records[candidate.name] = PluginRecord(
                **base, status="broken", reason=f"import failed: {type(exc).__name__}: {exc}",
                detail=traceback.format_exc())
            return
        self.register(plugin, **base)

    def register(self, plugin: Any, *, name: str, distribution: str, version: str,
                 record: bool = True) -> PluginRecord:
        """Register a plugin object and run its registration hooks.  Tests and embedding
        applications may call this directly with a module or object."""
        with self._lock:
            base = dict(name=name, distribution=distribution, version=version)
            try:
                self.pm.register(plugin, name=name)
            except Exception as exc:
                rec = PluginRecord(**base, status="broken",
                                   reason=f"invalid hook implementation: {exc}",
                                   detail=traceback.format_exc())
                return self._keep(rec, record)
            info, failure = self._describe(plugin, name, version)
            backends_before = set(self.backends.names())
            for hook, keyword, attr, stamped in _REGISTRATION:
                if failure:
                    break
                view = Scoped(getattr(self, attr), distribution, stamped)
                failure = self._call(plugin, hook, {keyword: view})
            status, reason, detail = "ok", "", None
            if failure:
                status, reason, detail = "broken", failure[0], failure[1]
            elif record:  # built-ins are not probed while the host is being built
                mine = [self.backends.entries[n] for n in self.backends.names()
                        if n not in backends_before]
                if mine and not any(e.availability().available for e in mine):
                    status = "unavailable"
                    reason = "; ".join(f"{e.name}: {e.availability().reason}" for e in mine)
            rec = PluginRecord(**base, kind=info.kind if info else "", provides=(
                info.provides if info else []), status=status, reason=reason, detail=detail)
            return self._keep(rec, record)

    def _keep(self, rec: PluginRecord, record: bool) -> PluginRecord:
        if record:
            self.records[rec.name] = rec
        return rec

    def _describe(self, plugin: Any, name: str,
                  version: str) -> tuple[Optional[PluginInfo], Optional[tuple[str, str]]]:
        impl = self._impl(plugin, "mskernel_plugin_info")
        if impl is None:
            return None, None
        try:
            info = impl()
            if not isinstance(info, PluginInfo):
                info = PluginInfo.model_validate(info)
            return info, None
        except Exception as exc:
            return None, (f"mskernel_plugin_info raised {type(exc).__name__}: {exc}",
                          traceback.format_exc())

    def _impl(self, plugin: Any, hook: str) -> Optional[Callable[..., Any]]:
        for impl in getattr(self.pm.hook, hook).get_hookimpls():
            if impl.plugin is plugin:
                return impl.function
        return None

    def _call(self, plugin: Any, hook: str, kwargs: dict[str, Any]) -> Optional[tuple[str, str]]:
        """Call one plugin's implementation of ``hook``; return (reason, traceback) on error."""
        impl = self._impl(plugin, hook)
        if impl is None:
            return None
        try:
            impl(**kwargs)
        except Exception as exc:
            return f"{hook} raised {type(exc).__name__}: {exc}", traceback.format_exc()
        return None

    # -- what the rest of the core asks --------------------------------------------------------

    def plugin_records(self) -> list[PluginRecord]:
        self.load_external()
        return [self.records[n] for n in sorted(self.records)]

    def commands(self) -> CommandRegistry:
        """CLI sub-commands of the healthy plugins (the hook runs only for the CLI)."""
        self.load_external()
        if self._commands is None:
            self._commands = CommandRegistry()
            for name, plugin in self.pm.list_name_plugin():
                rec = self.records.get(name)
                if rec is None or rec.status not in ("ok", "unavailable"):
                    continue
                view = Scoped(self._commands, rec.distribution, ("add",))
                failure = self._call(plugin, "mskernel_add_cli", {"commands": view})
                if failure:
                    self.records[name] = rec.model_copy(update=dict(
                        status="broken", reason=failure[0], detail=failure[1]))
        return self._commands

    def namespace(self, name: str) -> Any:
        """The module behind ``mskernel.<name>``, imported on first access."""
        self.load_external()
        entry = self.namespaces.modules.get(name)
        if entry is None:
            raise MissingPluginError(self._missing_namespace_message(name))
        return import_module(entry[0])

    def _missing_namespace_message(self, name: str) -> str:
        distribution = f"mskernel-{name}"
        for rec in self.records.values():
            if rec.distribution == distribution or rec.name == name:
                return (f"mskernel.{name} is provided by {rec.distribution}, which is installed "
                        f"but {rec.status}: {rec.reason} (see `mskernel plugins info {rec.name}`)")
        return (f"module 'mskernel' has no attribute '{name}': no installed plugin provides "
                f"mskernel.{name}; install it with `pip install {distribution}`")


_host: Optional[PluginHost] = None
_host_lock = threading.Lock()


def host() -> PluginHost:
    """The process-wide plugin host (created on first call)."""
    global _host
    if _host is None:
        with _host_lock:
            if _host is None:
                _host = PluginHost()
    return _host


def reset_host() -> None:
    """Forget the host so the next :func:`host` call rediscovers plugins (for tests)."""
    global _host
    with _host_lock:
        _host = None
