"""The plugin system: hook specifications (the plugin author's contract), the ``hookimpl``
marker, plugin metadata models, and the process-wide plugin host.

The host lives in :mod:`mskernel.hooks.host`; :func:`plugin_host` returns it without
importing anything at ``import mskernel.hooks`` time.
"""

from .info import PluginInfo, PluginRecord
from .markers import hookimpl, hookspec

__all__ = ["PluginInfo", "PluginRecord", "hookimpl", "hookspec", "plugin_host", "reset_host"]


def plugin_host():
    """The process-wide :class:`~mskernel.hooks.host.PluginHost` (created on first call)."""
    from .host import host

    return host()


def reset_host() -> None:
    """Forget the plugin host; the next use rediscovers the plugins (for tests)."""
    from .host import reset_host as _reset

    _reset()
