"""The plugin host: one per process.  It owns the registries, registers the built-in plugins,
and loads external plugins on first use, recording the health of each.

Built-in plugins (the core op set, the reference backend, the generic passes) register through
the same hooks as external ones.  External plugins are found by :mod:`.discovery` from metadata
alone; they are imported only when :meth:`PluginHost.load_external` runs — on the first backend
lookup, namespace access, unknown op name, or ``mskernel plugins`` command.
"""

from __future__ import annotations

import difflib
import importlib
import sys
import threading
import traceback
from contextlib import contextmanager
from importlib import import_module
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import pluggy
from packaging.utils import canonicalize_name

from .._version import __version__
from ..errors import MissingPluginError, PluginError
from ..ops.registry import OpRegistry, RuleRegistry
from ..passes.registry import PassRegistry
from ..runtime.registry import BackendRegistry
from . import hookspecs
from .containment import Contained
from .discovery import Candidate, discover, disabled_names, incompatibility, is_disabled
from .distributions import known_provider
from .info import PluginInfo, PluginRecord
from .markers import PROJECT
from .registries import CommandRegistry, ModelReaderRegistry, NamespaceRegistry, Scoped

CORE = "mskernel"

#: Built-in plugin modules, registered at start-up in this order.
BUILTIN_PLUGINS = (
    "mskernel.ops.core",
    "mskernel.runtime.reference",
    "mskernel.passes.generic",
    "mskernel.ir.fileformat",
)

# Registration hooks in lifecycle order: (hook name, keyword, registry attribute, stamped methods)
_REGISTRATION = (
    ("mskernel_register_ops", "registry", "ops", ("define", "define_all")),
    ("mskernel_register_rules", "rules", "rules", ("register",)),
    ("mskernel_register_backends", "backends", "backends", ("register",)),
    ("mskernel_register_passes", "passes", "passes", ("register", "register_pipeline")),
    ("mskernel_register_namespaces", "namespaces", "namespaces", ("register",)),
    ("mskernel_register_model_readers", "readers", "model_readers", ("register",)),
)

#: The registries the registration hooks fill: what a failing plugin put there is taken out.
_REGISTRIES = tuple(attr for _, _, attr, _ in _REGISTRATION)

_Failure = tuple[str, str]  # (one-line reason, traceback)


class PluginHost:
    """The registries every plugin fills, and what is known about each external plugin.

    ``records`` holds the health of each discovered plugin as found when it was loaded;
    :meth:`plugin_records` adds what only a probe can tell (``unavailable`` backends).
    """

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.ops = OpRegistry(loader=self.load_external)
        self.rules = RuleRegistry()
        self.backends = BackendRegistry()
        self.passes = PassRegistry()
        self.namespaces = NamespaceRegistry()
        self.model_readers = ModelReaderRegistry()
        self.records: dict[str, PluginRecord] = {}
        self._rules_by_plugin: dict[str, list[tuple[str, str]]] = {}
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
        base: dict[str, Any] = dict(
            name=candidate.name, distribution=candidate.distribution, version=candidate.version,
            entry_point=candidate.entry_point.value)
        if is_disabled(candidate, disabled):
            self.records[candidate.name] = PluginRecord(
                **base, status="disabled", reason="switched off by MSKERNEL_DISABLE_PLUGINS")
            return
        reason = incompatibility(candidate, __version__)
        if reason:
            self.records[candidate.name] = PluginRecord(
                **base, status="incompatible", reason=reason)
            return
        with Contained() as importing:
            plugin = candidate.entry_point.load()
        if importing.error is not None:
            self.records[candidate.name] = PluginRecord(
                **base, status="broken", reason=f"import failed: {importing.reason}",
                detail=_plugin_traceback(importing.error))
            return
        self.register(plugin, **base)

    def register(self, plugin: Any, *, name: str, distribution: str, version: str,
                 entry_point: str = "", record: bool = True) -> PluginRecord:
        """Register a plugin object (a module, or any object with hook functions) and run its
        registration hooks.  Tests and embedding applications may call this directly.

        When a hook fails, the plugin is ``broken`` and everything its hooks registered is
        taken out again — ops it overrode are back as they were — and its remaining hooks are
        not called."""
        with self._lock:
            base = dict(name=name, distribution=distribution, version=version,
                        entry_point=entry_point)
            failure = self._add_to_manager(plugin, name)
            if failure:
                rec = PluginRecord(**base, status="broken", reason=failure[0], detail=failure[1])
                return self._keep(rec, record)
            before = {attr: getattr(self, attr).snapshot() for attr in _REGISTRIES}
            info, failure = self._describe(plugin)
            for hook, keyword, attr, stamped in _REGISTRATION:
                if failure:
                    break
                view = Scoped(getattr(self, attr), distribution, stamped)
                if hook == "mskernel_register_rules":
                    failure = self._call_tracking_rules(plugin, name, {keyword: view})
                else:
                    failure = self._call(plugin, hook, {keyword: view})
            if failure:
                self._withdraw(plugin, name, before)
            rec = PluginRecord(
                **base, kind=info.kind if info else "", provides=info.provides if info else [],
                description=info.description if info else "",
                status="broken" if failure else "ok",
                reason=failure[0] if failure else "", detail=failure[1] if failure else None)
            return self._keep(rec, record)

    def _add_to_manager(self, plugin: Any, name: str) -> Optional[_Failure]:
        """Register with pluggy (which checks each hookimpl's signature against its spec) and
        refuse hook implementations no spec declares (a misspelt hook would do nothing)."""
        with Contained() as adding:
            self.pm.register(plugin, name=name)
            unknown = sorted(
                caller.name for caller in self.pm.get_hookcallers(plugin) or ()
                if not caller.has_spec() and any(
                    impl.plugin is plugin and not impl.optionalhook
                    for impl in caller.get_hookimpls())
            )
            if unknown:
                raise PluginError(f"unknown hook(s) {', '.join(unknown)}{_close_hooks(unknown)}")
        exc = adding.error
        if exc is None:
            return None
        if self.pm.get_plugin(name) is plugin:
            self.pm.unregister(name=name)
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return (f"invalid hook implementation: {type(exc).__name__}: {first_line}",
                _plugin_traceback(exc))

    def _withdraw(self, plugin: Any, name: str, before: dict[str, Any]) -> None:
        """Take out what a failing plugin registered: the registries go back to ``before``
        (their snapshots), and its hooks are never called again."""
        for attr, state in before.items():
            getattr(self, attr).restore(state)
        self._rules_by_plugin.pop(name, None)
        self.pm.unregister(plugin)

    def _keep(self, rec: PluginRecord, record: bool) -> PluginRecord:
        if record:
            self.records[rec.name] = rec
        return rec

    def _describe(self, plugin: Any) -> tuple[Optional[PluginInfo], Optional[_Failure]]:
        impl = self._impl(plugin, "mskernel_plugin_info")
        if impl is None:
            return None, None
        with Contained() as describing:
            info = impl()
            if not isinstance(info, PluginInfo):
                info = PluginInfo.model_validate(info)
            return info, None
        assert describing.error is not None  # the block returns unless the plugin raised
        return None, (f"mskernel_plugin_info raised {describing.reason}",
                      _plugin_traceback(describing.error))

    def _impl(self, plugin: Any, hook: str) -> Optional[Callable[..., Any]]:
        for impl in getattr(self.pm.hook, hook).get_hookimpls():
            if impl.plugin is plugin:
                return impl.function
        return None

    def _call(self, plugin: Any, hook: str, kwargs: dict[str, Any]) -> Optional[_Failure]:
        """Call one plugin's implementation of ``hook``; return (reason, traceback) on error."""
        impl = self._impl(plugin, hook)
        if impl is None:
            return None
        with Contained() as calling:
            impl(**kwargs)
        if calling.error is None:
            return None
        return f"{hook} raised {calling.reason}", _plugin_traceback(calling.error)

    def _call_tracking_rules(self, plugin: Any, name: str,
                             kwargs: dict[str, Any]) -> Optional[_Failure]:
        """``mskernel_register_rules``, remembering which (kind, op) rules it set."""
        if self._impl(plugin, "mskernel_register_rules") is None:
            return None
        before = self._rule_table()
        failure = self._call(plugin, "mskernel_register_rules", kwargs)
        after = self._rule_table()
        self._rules_by_plugin[name] = sorted(k for k, rule in after.items()
                                             if before.get(k) is not rule)
        return failure

    def _rule_table(self) -> dict[tuple[str, str], Any]:
        return {(kind, op): self.rules.get(kind, op)
                for kind in self.rules.kinds() for op in self.rules.ops_with(kind)}

    # -- what the rest of the core asks --------------------------------------------------------

    def plugin_records(self) -> list[PluginRecord]:
        """Every discovered plugin by name.  A loaded plugin whose backends all report that
        they cannot run here (probed now) is ``unavailable``, with their reasons."""
        self.load_external()
        return [self._probed(self.records[n]) for n in sorted(self.records)]

    def record(self, name: str) -> Optional[PluginRecord]:
        """One plugin's record as :meth:`plugin_records` gives it, ``None`` if unknown."""
        self.load_external()
        rec = self.records.get(name)
        return self._probed(rec) if rec is not None else None

    def _probed(self, rec: PluginRecord) -> PluginRecord:
        if rec.status != "ok":
            return rec
        mine = [e for e in self.backends.entries.values() if e.owner == rec.distribution]
        verdicts = [(e.name, e.availability()) for e in mine]
        if not verdicts or any(a.available for _, a in verdicts):
            return rec
        reason = "; ".join(f"backend '{n}': {a.reason or 'not available'}" for n, a in verdicts)
        return rec.model_copy(update=dict(status="unavailable", reason=reason))

    def rules_registered_by(self, name: str) -> list[tuple[str, str]]:
        """The (kind, op name) rules plugin ``name`` registered, sorted."""
        return list(self._rules_by_plugin.get(name, ()))

    def commands(self) -> CommandRegistry:
        """CLI sub-commands of the loaded plugins (the hook runs only for the CLI).  A plugin
        whose ``mskernel_add_cli`` raises becomes ``broken`` and the commands it added are
        taken out; what its registration hooks registered stays (the program may be using
        it already)."""
        self.load_external()
        with self._lock:
            if self._commands is None:
                self._commands = CommandRegistry()
                for name, plugin in self.pm.list_name_plugin():
                    rec = self.records.get(name)
                    if rec is None or rec.status != "ok":
                        continue
                    view = Scoped(self._commands, rec.distribution, ("add",))
                    before = self._commands.snapshot()
                    failure = self._call(plugin, "mskernel_add_cli", {"commands": view})
                    if failure:
                        self._commands.restore(before)
                        self.records[name] = rec.model_copy(update=dict(
                            status="broken", reason=failure[0], detail=failure[1]))
            return self._commands

    def namespace_target(self, name: str) -> Optional[str]:
        """The registered target of namespace ``name`` (``None`` when none is registered)."""
        self.load_external()
        entry = self.namespaces.modules.get(name)
        return entry[0] if entry else None

    def namespace(self, name: str) -> Any:
        """What ``mskernel.<name>`` stands for — a module, or an attribute of one for a
        ``"module:attribute"`` target — imported on first access."""
        self.load_external()
        entry = self.namespaces.modules.get(name)
        if entry is None:
            raise MissingPluginError(self._missing_namespace_message(name))
        target, owner = entry
        module_name, _, attribute = target.partition(":")
        with Contained() as loading:
            module = import_module(module_name)
            return getattr(module, attribute) if attribute else module
        raise PluginError(f"mskernel.{name} (provided by {owner}) failed to load {target}: "
                          f"{loading.reason}") from loading.error

    def _missing_namespace_message(self, name: str) -> str:
        distribution = known_provider(name)
        for rec in self.records.values():
            if (canonicalize_name(rec.distribution) == distribution or rec.name == name
                    or f"namespace:{name}" in rec.provides):
                see = f"(see `mskernel plugins info {rec.name}`)"
                if rec.status == "ok":
                    return (f"module 'mskernel' has no attribute '{name}': {rec.distribution} "
                            f"is installed but registers no namespace '{name}' {see}")
                return (f"mskernel.{name} is provided by {rec.distribution}, which is installed "
                        f"but {rec.status}: {rec.reason} {see}")
        if distribution is None:
            return (f"module 'mskernel' has no attribute '{name}': no installed plugin provides "
                    f"mskernel.{name}, and no mskernel distribution is known to")
        return (f"module 'mskernel' has no attribute '{name}': no installed plugin provides "
                f"mskernel.{name}; install it with `pip install {distribution}`")


def _plugin_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` without the host's and the import system's frames, so a
    plugin author sees only their own code."""
    report = traceback.TracebackException.from_exception(exc)
    own = [frame for frame in report.stack if not _is_machinery(frame.filename)]
    if own:
        report.stack = traceback.StackSummary.from_list(own)
    return "".join(report.format())


def _is_machinery(filename: str) -> bool:
    return (filename == __file__ or filename.startswith("<frozen ")
            or Path(filename).is_relative_to(_IMPORTLIB))


_IMPORTLIB = Path(importlib.__file__).parent


def _close_hooks(names: list[str]) -> str:
    known = [n for n in vars(hookspecs) if n.startswith("mskernel_")]
    close = sorted({c for n in names for c in difflib.get_close_matches(n, known, n=1)})
    return f" (did you mean {', '.join(close)}?)" if close else f"; hooks: {', '.join(known)}"


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
    """Forget the host so the next :func:`host` call rediscovers plugins (for tests), and
    the default device chosen from the old host's backends."""
    global _host
    with _host_lock:
        _host = None
    device = sys.modules.get("mskernel.frontend.device")
    if device is not None:
        device.forget_default()


@contextmanager
def fresh_host() -> Iterator[None]:
    """A host that rediscovers the plugins (on first use) for the enclosed block — tests
    that install, hide or break plugins; afterwards the previous host is back, with the very
    backend objects existing tensors live on and the default device it had."""
    global _host
    with _host_lock:
        previous = _host
    device = sys.modules.get("mskernel.frontend.device")
    previous_default = device.swap_default(None) if device is not None else None
    reset_host()
    try:
        yield
    finally:
        with _host_lock:
            _host = previous
        device = sys.modules.get("mskernel.frontend.device")
        if device is not None:
            device.swap_default(previous_default)
