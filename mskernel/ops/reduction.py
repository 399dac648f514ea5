"""Core ops: reduction."""

from __future__ import annotations

from .registry import OpDef

OPS: list[OpDef] = []
