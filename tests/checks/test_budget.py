"""judge.checks.budget: a schedule served through a learner's compiled callable; eager fallbacks, hand-made graphs."""

from dataclasses import dataclass

import pytest
import torch

from judge import ir
from judge.checks import GraphBreak, Recompile, WrongAnswer
from judge.checks.budget import serve_schedule
from judge.remote.graphs import Graph


def captured() -> torch.fx.GraphModule:
    """`x * 2` as Dynamo captured it, through the runner's IR and back (its inputs carry their example values)."""
    found = []
    torch._dynamo.reset()
    torch.compile(lambda x: (x * 2,), backend=lambda gm, _: found.append(gm) or gm.forward)(torch.randn(2, 3))
    return ir.from_ir(ir.to_ir(found[0]))


def traced_by_hand() -> torch.fx.GraphModule:
    return ir.from_ir(ir.to_ir(torch.fx.symbolic_trace(lambda x: (x * 2,))))


@dataclass
class Call:
    graph: int


class Scripted:
    """Stands in for a RemoteCompiled: each call follows the plan ('new': a graph compiled and run, 'old': graph 0
    run again, 'eager': no graph ran and none was compiled, 'break': two graphs ran)."""

    def __init__(self, plan, make=captured, reasons=("tensor 'x' size mismatch at index 0. expected 2, actual 4",)):
        self.plan, self.make, self.graphs, self.calls = list(plan), make, [], []
        self.recompile_reasons: list[str] = []
        self.reasons = list(reasons)

    @property
    def frame_count(self):
        return len(self.graphs)

    def __call__(self, x):
        step = self.plan.pop(0)
        if step in ("new", "break"):
            if self.graphs:
                self.recompile_reasons += self.reasons
            self.graphs.append(Graph(self.make(), [{"kind": "arg", "path": [0]}]))
        if step in ("eager", "break"):
            raise GraphBreak("one call ran 0 graphs")
        self.calls.append(Call(len(self.graphs) - 1 if step == "new" else 0))
        return x * 2


def requests(n):
    return [torch.randn(2, 3) for _ in range(n)]


def test_a_schedule_served_by_graphs_gives_each_request_and_its_expected_value():
    served = serve_schedule(Scripted(["new", "old", "new"]), requests(3), expected_fn=lambda x: x + 0)
    assert served.eager == [] and [torch.equal(out, x * 2) for x, out, _ in served.results] == [True] * 3


def test_a_request_that_ran_eagerly_fails_naming_it_and_the_last_guard():
    with pytest.raises(Recompile) as info:
        serve_schedule(Scripted(["new", "new", "eager", "old"]), requests(4))
    message = str(info.value.message)
    assert "request 3 (x [2, 3] float32) ran eagerly" in message and "recompile_limit" in message
    assert "expected 2, actual 4" in message and info.value.diagnostics[0].compiles == 2


def test_with_allow_eager_the_eager_requests_are_recorded():
    served = serve_schedule(Scripted(["new", "eager", "old"]), requests(3), allow_eager=True)
    assert served.eager == [2] and served.results[1][1] is None


def test_nothing_compiled_at_all_is_a_wrong_answer():
    with pytest.raises(WrongAnswer, match="never compiled"):
        serve_schedule(Scripted(["eager", "eager"]), requests(2))


def test_a_graph_break_that_compiled_a_graph_is_raised_as_it_is():
    with pytest.raises(GraphBreak, match="ran 0 graphs"):
        serve_schedule(Scripted(["new", "break"]), requests(2))


def test_a_graph_traced_by_hand_is_refused():
    with pytest.raises(WrongAnswer, match="torch.compile did not capture"):
        serve_schedule(Scripted(["new"], make=traced_by_hand), requests(1))
