"""PyTorch modules' state for the tests that bring them in."""

from __future__ import annotations

from typing import Any


def randomise_batch_norm(module: Any, seed: int = 1) -> None:
    """Running statistics and affine parameters away from 0/1, so that mapping or exporting
    them wrongly would show."""
    import torch

    batch_norms = (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d, torch.nn.BatchNorm3d)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, batch_norms):
                m.running_mean.copy_(torch.randn(m.num_features, generator=generator) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=generator) + 0.5)
                m.weight.data.copy_(torch.rand(m.num_features, generator=generator) + 0.5)
                m.bias.data.copy_(torch.randn(m.num_features, generator=generator) * 0.1)
