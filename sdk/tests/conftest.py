"""Fixtures of the SDK's tests: the SDK installed for real (once per session), and a plugin
host of this process that sees no installed plugins."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

import mskernel.hooks.host as host_module
from sdk_testing import SDK, pip_install


@pytest.fixture(scope="session")
def sdk_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding mskernel-sdk as pip installs it (entry points and templates
    included)."""
    scratch = tmp_path_factory.mktemp("sdk-install")
    site = scratch / "site"
    pip_install(SDK, site, scratch)
    return site


@pytest.fixture
def fresh_host(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A plugin host of this process that sees no installed plugins."""
    for variable in ("MSKERNEL_DISABLE_PLUGINS", "MSKERNEL_BACKENDS"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(host_module, "discover", lambda: [])
    with host_module.fresh_host():
        yield
