"""mskernel-npfuse: the npfuse backend for mskernel (mskernel plugin API 1.0)."""

__version__ = "0.1.0"
