"""Core ops: random."""

from __future__ import annotations

from .registry import OpDef

OPS: list[OpDef] = []
