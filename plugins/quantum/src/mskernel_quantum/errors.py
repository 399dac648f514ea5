"""The exceptions mskernel-quantum raises; each is also a ``ValueError`` so callers that only
know the standard library can catch it."""

from __future__ import annotations

from mskernel_sdk import MskernelError


class QuantumError(MskernelError, ValueError):
    """A circuit, gate, Hamiltonian or simulator was used in a way it does not support."""


class ParameterError(QuantumError):
    """A parameter expression is malformed, not linear, or lacks a value."""


class QasmError(QuantumError):
    """OpenQASM 2.0 text could not be read, or a circuit has no OpenQASM 2.0 form.  When the
    text is known the message gives ``line:column``."""
