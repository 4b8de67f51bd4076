"""Symbolic sizes in a captured graph: unbacked symbols mean data-dependent shapes."""

from __future__ import annotations

import torch


def _free_symbols(value) -> set:
    import torch.fx.experimental.symbolic_shapes as ss

    if isinstance(value, torch.Tensor):
        return set(ss.free_symbols(value))
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return set(ss.free_symbols(value))
    if isinstance(value, (list, tuple)):
        return set().union(*(_free_symbols(v) for v in value)) if value else set()
    return set()


def unbacked_symbols(gm: torch.fx.GraphModule) -> set[str]:
    """Names of unbacked symbols (u0, u1, ...; from .item(), nonzero(), data-dependent sizes) in the graph."""
    found = set()
    for node in gm.graph.nodes:
        for sym in _free_symbols(node.meta.get("example_value", node.meta.get("val"))):
            name = str(sym)
            if name.startswith("u"):
                found.add(name)
    return found
