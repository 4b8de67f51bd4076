"""Instrument a rebuilt graph: what ran, how often, which branch of each `torch.cond`, how many `while_loop` turns.

A graph from the runner is rebuilt here with Dynamo's own targets (`torch.tanh`, `operator.mul`, tensor methods
such as `sum`) and each higher-order operator as one node whose subgraphs are submodules (`cond_true_0`,
`cond_false_0`, `while_loop_body_graph_0`...). Two views of a run, both through those operators:

- `run_counting(gm, *args)`: the graph's own nodes that ran, the branches taken, the loop turns (an FX
  interpreter that evaluates each higher-order operator itself, so a branch not taken runs nothing);
- `executed_ops(fn, *args)`: the ATen operators that really ran, e.g. {'aten.tanh.default': 1}, for any callable
  (a rebuilt graph, a reference function calling `torch.cond` eagerly);
- `executed_work(fn, *args)`: those and their total work, whatever the operators' names (`work`): a cost check
  that looks for names (`mm`, `tanh`) passes a graph that spells a matmul as a broadcast multiply and a sum.

Run a graph from the runner sealed (`judge.checks.sealed.run_sealed`): these helpers take the copies it hands
to its function, e.g. `run_sealed(lambda *v: run_counting(gm, *v), values, what=...)`.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field

import torch
import torch.utils._pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

from judge.shared.ir import target_name

HOP = torch.ops.higher_order


@dataclass
class GraphRun:
    """What one run of a graph did: its output and counts of what ran."""

    output: object
    nodes: collections.Counter = field(default_factory=collections.Counter)
    """Targets of the nodes that ran, subgraphs included: {'torch.tanh': 1, 'Tensor.sum': 2, 'operator.mul': 1}."""
    branches: collections.Counter = field(default_factory=collections.Counter)
    """Subgraphs entered, by path: {'cond_true_0': 1} (a nested one: 'cond_true_0.cond_false_0')."""
    loop_turns: collections.Counter = field(default_factory=collections.Counter)
    """Body runs of each `while_loop` node, by path: {'while_loop': 5}."""

    def ran(self, name: str) -> int:
        """How often a target ran, by its full name ('torch.tanh') or its last part ('tanh')."""
        return sum(n for target, n in self.nodes.items() if target == name or target.rsplit(".", 1)[-1] == name)


def node_name(node: torch.fx.Node) -> str:
    """The name a node's target is counted under: 'torch.tanh', 'operator.mul', 'Tensor.sum'."""
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    if node.op == "call_module":
        return f"module.{node.target}"
    name = target_name(node.target)
    return "operator." + name.removeprefix("_operator.") if name.startswith("_operator.") else name


class _Counting(torch.fx.Interpreter):
    def __init__(self, gm: torch.fx.GraphModule, run: GraphRun, path: str = ""):
        super().__init__(gm)
        self.record, self.path = run, path

    def sub(self, node: torch.fx.Node, index: int, *values):
        attr = node.args[index]
        name = attr.target if isinstance(attr, torch.fx.Node) else f"{node.name}[{index}]"
        path = f"{self.path}{name}"
        gm = getattr(self.module, name) if isinstance(attr, torch.fx.Node) else attr
        self.record.branches[path] += 1
        return _Counting(gm, self.record, path + ".").run(*values)

    def run_node(self, n: torch.fx.Node):
        if n.op in ("call_function", "call_method", "call_module"):
            self.record.nodes[node_name(n)] += 1
        if n.op != "call_function" or not isinstance(n.target, torch._ops.HigherOrderOperator):
            return super().run_node(n)
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        if n.target is HOP.cond:
            pred, _, _, operands = args
            return self.sub(n, 1 if bool(pred) else 2, *operands)
        if n.target is HOP.while_loop:
            _, _, carried, extra = args
            carried = tuple(carried)
            while bool(_single(self.sub(n, 0, *carried, *extra))):
                self.record.loop_turns[f"{self.path}{n.name}"] += 1
                carried = tuple(_as_tuple(self.sub(n, 1, *carried, *extra)))
            return carried
        if n.target is HOP.wrap:
            return self.sub(n, 0, *args[1:])
        if n.target is getattr(HOP, "invoke_subgraph", None):
            return self.sub(n, 0, *args[2:])
        return super().run_node(n)  # scan, map_impl, ...: run as one operator, not entered


def _single(value):
    return value[0] if isinstance(value, (tuple, list)) and len(value) == 1 else value


def _as_tuple(value):
    return value if isinstance(value, (tuple, list)) else (value,)


def run_counting(gm: torch.fx.GraphModule, *args) -> GraphRun:
    """Run `gm(*args)` node by node: the output, each target's count, the branches taken and the loop turns.

    A `torch.cond` runs only its taken branch, a `while_loop` its body once per turn (both counted inside);
    `wrap` and `invoke_subgraph` are entered; other higher-order operators run as one node."""
    run = GraphRun(output=None)
    with torch.no_grad():
        run.output = _Counting(gm, run).run(*args)
    return run


def work(func, args, kwargs, out) -> int:
    """One ATen call's work in elementary operations: a matmul, convolution or attention its multiply-adds
    (torch.utils.flop_counter's formulas, halved), any other operator the most elements among its tensors in and out
    (an elementwise op, a reduction, a copy, a view alike)."""
    from torch.utils.flop_counter import flop_registry

    formula = flop_registry.get(getattr(func, "_overloadpacket", None))
    if formula is not None:
        try:
            return int(formula(*args, **kwargs, out_val=out)) // 2
        except Exception:  # noqa: BLE001 - a formula that does not fit this overload: counted by its elements
            pass
    tensors = [t for t in pytree.tree_leaves((args, kwargs, out)) if isinstance(t, torch.Tensor)]
    return max((t.numel() for t in tensors), default=0)


class OpRecorder(TorchDispatchMode):
    """A dispatch mode that counts every ATen operator that runs under it, through higher-order operators, and sums
    their `work`."""

    def __init__(self):
        super().__init__()
        self.ran: collections.Counter = collections.Counter()
        self.work = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ran[str(func)] += 1
        out = func(*args, **(kwargs or {}))
        self.work += work(func, args, kwargs or {}, out)
        return out


@torch._dynamo.disable  # torch.cond called eagerly compiles its own call: these rules stay eager
def _cond_rule(mode, pred, true_fn, false_fn, operands):
    with mode:
        return (true_fn if bool(pred) else false_fn)(*operands)


@torch._dynamo.disable
def _while_loop_rule(mode, cond_fn, body_fn, carried, extra):
    carried = tuple(carried)
    with mode:
        while bool(_single(cond_fn(*carried, *extra))):
            carried = tuple(_as_tuple(body_fn(*carried, *extra)))
    return carried


@torch._dynamo.disable
def _map_rule(mode, f, xs, pos_args):
    from torch._higher_order_ops.map import map_dense

    with mode:  # the body once per slice: its operators counted as often as they run
        return map_dense(f, xs, pos_args)


@torch._dynamo.disable
def _scan_rule(mode, combine_fn, init, xs, additional_inputs):
    from torch._higher_order_ops.scan import generic_scan

    with mode:  # the combine function once per step
        return generic_scan(combine_fn, init, xs, additional_inputs=additional_inputs)


def _entered_rule(first_operand: int):
    @torch._dynamo.disable
    def rule(mode, body, *args, **kwargs):
        with mode:
            return body(*args[first_operand - 1:], **kwargs)
    return rule


OPAQUE = "higher_order."
"""The prefix of an `executed_ops` entry for a higher-order operator whose body it did not enter: work inside it
went uncounted, so a cost check that sees one cannot pass (`opaque`)."""


def _opaque_rule(hop):
    def rule(mode, *args, **kwargs):
        mode.ran[f"{OPAQUE}{hop.__name__}"] += 1
        return hop(*args, **kwargs)  # the mode is off here: what runs inside is not counted
    return rule


_RULES = {"cond": _cond_rule, "while_loop": _while_loop_rule, "map_impl": _map_rule, "scan": _scan_rule,
          "wrap": _entered_rule(1), "invoke_subgraph": _entered_rule(2)}
for _name, _hop in list(torch._ops._higher_order_ops.items()):
    try:
        _hop.py_impl(OpRecorder)(_RULES.get(_name) or _opaque_rule(_hop))
    except Exception:  # noqa: BLE001 - a rule already there (this module imported twice) stays
        pass


def opaque(ran: collections.Counter) -> list[str]:
    """The higher-order operators of an `executed_ops` count whose bodies were not counted, e.g. ['flex_attention']."""
    return sorted(name.removeprefix(OPAQUE) for name, n in ran.items() if name.startswith(OPAQUE) and n)


def executed_ops(fn, *args) -> tuple[object, collections.Counter]:
    """Call `fn(*args)` and count the ATen operators that really ran, e.g. {'aten.tanh.default': 1}.

    Through `torch.cond` (the taken branch only), `while_loop` (each turn), `map` (each slice), `scan` (each step),
    `wrap` and `invoke_subgraph`; any other higher-order operator counts as one `higher_order.<name>` entry, its body
    unseen (`opaque`). A GraphModule runs its generated code (as `gm(*args)` does)."""
    output, ran, _ = executed_work(fn, *args)
    return output, ran


def executed_work(fn, *args) -> tuple[object, collections.Counter, int]:
    """`executed_ops`, and the total `work` of the operators that ran (higher-order operators' bodies included, an
    opaque one's not: check `opaque` first)."""
    recorder = OpRecorder()
    with torch.no_grad(), recorder:
        output = fn(*args)
    return output, recorder.ran, recorder.work


def graph_text(gm: torch.fx.GraphModule) -> str:
    """A graph's code with every subgraph (cond branches, loop bodies) below it, as `print_readable` shows it."""
    return gm.print_readable(print_output=False, include_stride=False, include_device=False).strip()
