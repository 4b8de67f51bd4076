"""Handed to the runner for fx-pass-silu (the learner's code never needs it; the grader asks through it).

`executed_ops(gm, *args)` runs the module the learner's pass returned, where it lives, and counts the ATen
operations that really ran: it tells a forgotten gm.recompile() (gm.forward still running the old code) from
a graph that is right. It can only explain a failure: the verdict rests on the returned graph, rebuilt and
run by the grader.
"""

from judge.checks.fx_passes import executed_ops as _executed_ops


def executed_ops(gm, *args) -> dict[str, int]:
    """{'aten.silu.default': 2, ...}: the ATen operations calling gm(*args) runs."""
    return dict(_executed_ops(gm, *args)[1])
