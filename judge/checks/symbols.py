"""Symbolic sizes in a captured graph: unbacked symbols mean data-dependent shapes (see judge.checks.shapes)."""

from __future__ import annotations

import torch

from judge.checks.shapes import unbacked_origins


def unbacked_symbols(gm: torch.fx.GraphModule) -> set[str]:
    """Names of unbacked symbols (u0, u1, ...; from .item(), nonzero(), data-dependent sizes) in the graph."""
    return {name for name, _ in unbacked_origins(gm)}
