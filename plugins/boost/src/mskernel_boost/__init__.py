"""mskernel-boost: training made faster without rewriting the model — mixed precision
(``mskernel.amp``), the Boost algorithms and the THOR optimizer (``mskernel.boost``)."""

__version__ = "0.1.0"
