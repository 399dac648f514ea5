"""Samples for the sorting ops."""

from __future__ import annotations

from .. import SampleFn

SAMPLES: dict[str, SampleFn] = {}
