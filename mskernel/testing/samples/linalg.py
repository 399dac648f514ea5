"""Samples for the linalg ops."""

from __future__ import annotations

from .. import SampleFn

SAMPLES: dict[str, SampleFn] = {}
