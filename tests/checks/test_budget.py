"""judge.checks.budget: a schedule served through a learner's compiled callable; eager fallbacks, hand-made graphs."""

from dataclasses import dataclass

import pytest
import torch

from judge.checks import GraphBreak, Recompile, WrongAnswer
from judge.checks.budget import mark_as_recorded, recorded_arg_shapes, replay_here, serve_schedule
from judge.remote.graphs import Graph
from judge.shared import ir


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


def test_the_shapes_a_graph_recorded_for_the_calls_arguments():
    graph = Graph(captured(), [{"kind": "arg", "path": [0]}])
    assert recorded_arg_shapes(graph, 2) == [[2, 3], []]  # the second argument is not an input of the graph


def pooled(x, w):
    return (x * w.softmax(0)[:, None]).sum(0)


def sizes(*ns):
    return [(torch.randn(n, 4), torch.randn(n)) for n in ns]


@pytest.mark.parametrize("shapes, compiles", [
    ([["u0", 4], ["u0"]], 1),   # unbacked: no 0/1 specialisation
    ([["s0", 4], ["s0"]], 3),   # backed: 0 and 1 each compile a graph of their own
    ([["u0", 4], [0]], 3),      # w recorded static: its size guard fails
])
def test_a_replay_marks_every_request_as_recorded_and_counts_here(shapes, compiles):
    replayed = replay_here(pooled, sizes(0, 1, 5, 9), shapes)
    assert replayed.counter.frame_count == compiles and replayed.eager == []
    assert bool(replayed.reasons) == (compiles > 1)
    torch._dynamo.reset()


def test_a_replay_past_its_recompile_limit_names_the_eager_requests():
    replayed = replay_here(pooled, sizes(3, 4, 1, 0), [[3, 4], [3]], recompile_limit=2)  # 1 and 0 need graphs 3, 4
    assert replayed.counter.frame_count == 2 and replayed.eager == [3, 4]
    torch._dynamo.reset()


def test_marks_follow_the_recorded_names_and_a_rank_mismatch_marks_nothing():
    x = torch.randn(3, 4, 5)
    mark_as_recorded(x, ["u0", "s1", 5])
    assert x._dynamo_unbacked_indices == {0} and x._dynamo_dynamic_indices == {1}
    y = torch.randn(3, 4)
    mark_as_recorded(y, ["u0"])
    assert not hasattr(y, "_dynamo_unbacked_indices") and not hasattr(y, "_dynamo_dynamic_indices")
