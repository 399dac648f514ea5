"""Test setup: the plugin's rules and namespaces must be registered.  An installed
mskernel-autodiff registers through its entry point; from a source checkout where it is not
installed, register the plugin module with the plugin host directly."""

from mskernel.hooks.host import host
from mskernel_sdk import rule_registry


def pytest_configure(config) -> None:
    if not rule_registry().has("vjp", "exp"):
        from mskernel_autodiff import __version__, plugin

        host().register(plugin, name="autodiff", distribution="mskernel-autodiff",
                        version=__version__)
