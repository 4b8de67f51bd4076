"""judge.checks.shapes: input shapes with symbols, and data-dependent sizes traced to the learner's line."""

import importlib.util
import textwrap

import pytest
import torch

from judge.checks import GraphBreak, compile_one_graph
from judge.checks.locations import register_learner_file
from judge.checks.shapes import assert_no_unbacked_symbols, input_shapes, unbacked_origins

LEARNER_SOURCE = textwrap.dedent("""
    import torch

    def sliced(x, n):
        k = int(n.max())
        return x[:k].sum(0)

    def masked(x, n):
        keep = torch.arange(x.shape[0]) < n.max()
        return (x * keep[:, None]).sum(0)

    def boolean_index(x, n):
        return x[x[:, 0] > 0].sum(0)
""")


@pytest.fixture
def learner(tmp_path):
    path = tmp_path / "learner_shapes.py"
    path.write_text(LEARNER_SOURCE)
    register_learner_file(str(path), "solution.py")
    spec = importlib.util.spec_from_file_location("learner_shapes", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch._dynamo.reset()
    yield module
    torch._dynamo.reset()


def graph_of(fn, *args, dynamic=None):
    return compile_one_graph(fn, *args, dynamic=dynamic).graphs[0]


def test_input_shapes_static_and_symbolic():
    static = graph_of(lambda x: x * 2, torch.randn(8, 12, 16))
    assert input_shapes(static) == [[8, 12, 16]]
    x = torch.randn(8, 12, 16)
    torch._dynamo.mark_dynamic(x, 1)
    shapes = input_shapes(graph_of(lambda x: x * 2, x))
    assert len(shapes) == 1 and shapes[0][0] == 8 and shapes[0][2] == 16
    assert isinstance(shapes[0][1], str) and shapes[0][1].startswith("s")


def test_a_mask_has_no_unbacked_symbols(learner):
    gm = graph_of(learner.masked, torch.randn(6, 3), torch.tensor([2, 4]), dynamic=True)
    assert unbacked_origins(gm) == []
    assert_no_unbacked_symbols([gm])


def test_a_slice_of_item_length_names_the_learners_line(learner):
    gm = graph_of(learner.sliced, torch.randn(6, 3), torch.tensor([2, 4]))
    origins = unbacked_origins(gm)
    assert origins and origins[0][0].startswith("u")
    with pytest.raises(GraphBreak) as info:
        assert_no_unbacked_symbols([gm], what="the graph of sliced")
    message = str(info.value)
    assert "the graph of sliced" in message and "line 5 (`k = int(n.max())`)" in message
    assert info.value.diagnostics[0].location.file == "solution.py"


def test_boolean_indexing_is_data_dependent(learner):
    gm = graph_of(learner.boolean_index, torch.randn(6, 3), torch.tensor([1]))
    with pytest.raises(GraphBreak, match="line 13"):
        assert_no_unbacked_symbols([gm])
