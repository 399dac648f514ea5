"""The pluggy markers of the ``mskernel`` hook namespace.

Plugin authors decorate their hook implementations with :data:`hookimpl`::

    from mskernel.hooks import hookimpl

    @hookimpl
    def mskernel_register_ops(registry):
        registry.define(...)
"""

import pluggy

PROJECT = "mskernel"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)
