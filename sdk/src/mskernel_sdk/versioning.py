"""The version range a plugin declares on the distributions it is built against."""

from __future__ import annotations

from mskernel import __version__ as core_version


def series_requirement(distribution: str, version: str) -> str:
    """A requirement on the release series of ``version``: its minor series while the major
    version is 0 (``mskernel>=0.1,<0.2``: 0.x releases may change the plugin API), its
    major series from 1.0 on (``mskernel>=1.2,<2``)."""
    major, minor = (int(part) for part in version.split(".")[:2])
    upper = f"{major}.{minor + 1}" if major == 0 else str(major + 1)
    return f"{distribution}>={major}.{minor},<{upper}"


def core_requirement() -> str:
    """The requirement a plugin built against this core declares on it: the running core's
    minor series (``mskernel>=0.1,<0.2``; from 1.0 on, its major series ``mskernel>=1.2,<2``).
    The core checks it from metadata before importing the plugin."""
    return series_requirement("mskernel", core_version)
