"""The plugin system: hook specifications (the plugin author's contract), the ``hookimpl``
marker, plugin metadata models, and the process-wide plugin host."""

from .info import PluginInfo, PluginRecord
from .markers import hookimpl, hookspec

__all__ = ["PluginInfo", "PluginRecord", "hookimpl", "hookspec", "host", "reset_host"]


def host():
    """The process-wide :class:`~mskernel.hooks.host.PluginHost`."""
    from .host import host as _host

    return _host()


def reset_host() -> None:
    from .host import reset_host as _reset

    _reset()
