"""Samples for the state ops."""

from __future__ import annotations

from .. import SampleFn

SAMPLES: dict[str, SampleFn] = {}
