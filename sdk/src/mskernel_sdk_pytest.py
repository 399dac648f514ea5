"""The pytest plugin of mskernel-sdk's conformance kit (entry point ``pytest11``).

Without ``--mskernel-backend`` it only declares its options and imports nothing of mskernel
(it is a module of its own, outside the ``mskernel_sdk`` package, for that reason), so
installing the SDK slows down and risks no other test run.  With the option it resolves the
backend at start-up (an unknown or unavailable one is a usage error naming the registered
backends) and registers a :class:`mskernel_sdk.kit.session.KitSession`, which adds the kit's
checks to the collected items and writes the JSON report when the session ends.
"""

from __future__ import annotations

import pytest

MARKER = "mskernel_conformance"
SESSION_PLUGIN = "mskernel-conformance-session"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mskernel", "mskernel conformance kit (mskernel-sdk)")
    group.addoption("--mskernel-backend", metavar="NAME",
                    help="certify backend NAME: run every op it claims against the reference "
                         "semantics, gradients and end-to-end graphs, and write a JSON report")
    group.addoption("--mskernel-seed", type=int, metavar="N",
                    help="base seed of the kit's random inputs (default: a fresh one, printed "
                         "in the header and in every failure)")
    group.addoption("--mskernel-expectations", metavar="FILE", action="append", default=[],
                    help="a TOML file of expected failures and skips per backend (repeatable; "
                         "added to the ini option mskernel_expectations)")
    group.addoption("--mskernel-report", metavar="FILE",
                    help="also write the JSON report to FILE")
    group.addoption("--mskernel-core-coverage", type=float, metavar="PERCENT",
                    help="fail unless the backend passes the op stage on at least PERCENT "
                         "percent of the core ops")
    parser.addini("mskernel_expectations", type="paths", default=[],
                  help="TOML files of expected failures and skips per backend")


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from mskernel_sdk.kit import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: a check of the mskernel conformance kit")
    name = config.getoption("mskernel_backend")
    if name:
        from mskernel_sdk.kit.session import KitSession

        config.pluginmanager.register(KitSession.start(config, name), SESSION_PLUGIN)
