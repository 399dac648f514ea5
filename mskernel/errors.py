"""The exceptions mskernel raises.  Every message names what failed (op, pass, plugin, file)
and, where known, the user's source line."""

from __future__ import annotations


class MskernelError(Exception):
    """Base class of mskernel's own errors."""


class InferError(MskernelError):
    """Raised by an op's shape/dtype rule with just the reason; the registry adds the op name,
    the input types and the source location before the user sees it (as :class:`OpError`)."""


class OpError(MskernelError, TypeError, ValueError):
    """An op was applied to inputs or attributes it does not accept."""


class UnknownOpError(MskernelError, KeyError):
    """An op name that no installed plugin defines."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class VerifyError(MskernelError):
    """A graph breaks an IR invariant; the message names the node, op and types."""


class ParseError(MskernelError):
    """The text form of a graph could not be parsed; the message gives line and column."""


class FileFormatError(MskernelError):
    """A model file is corrupt, truncated, of a newer format, or needs missing plugins."""


class BackendError(MskernelError):
    """A backend is unavailable or cannot run a graph under the fallback policy."""


class PluginError(MskernelError):
    """A plugin failed to load or misbehaved in a hook; it names the plugin and hook."""


class MissingPluginError(MskernelError, AttributeError):
    """A feature needs a plugin distribution that is not installed (or not healthy)."""
