"""Samples for the shape ops."""

from __future__ import annotations

from .. import SampleFn

SAMPLES: dict[str, SampleFn] = {}
