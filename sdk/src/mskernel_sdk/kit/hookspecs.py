"""pytest hooks the kit calls; other pytest plugins (or a ``conftest.py``) implement them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import pytest

if TYPE_CHECKING:
    from .gradients import VJPBuilder


@pytest.hookspec(firstresult=True)
def pytest_mskernel_vjp_builder(config: pytest.Config) -> Optional["VJPBuilder"]:
    """Return the function that builds VJP graphs for the kit's ``grad`` stage (see
    :class:`mskernel_sdk.VJPBuilder`), or ``None``.  The first non-``None`` result wins; when
    there is none, the kit traces the user function ``mskernel.vjp`` (see
    :mod:`mskernel_sdk.kit.autodiff`).  Implement it in a pytest plugin or ``conftest.py``,
    marked ``@pytest.hookimpl(optionalhook=True)`` so that it loads without the SDK."""
