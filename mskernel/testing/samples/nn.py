"""Samples for the nn ops."""

from __future__ import annotations

from .. import SampleFn

SAMPLES: dict[str, SampleFn] = {}
