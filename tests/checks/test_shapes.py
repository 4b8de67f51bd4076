"""judge.checks.shapes: input shapes with symbols, and data-dependent sizes traced to the learner's line."""

import importlib.util
import textwrap

import pytest
import torch

from judge.checks import GraphBreak, compile_one_graph
from judge.checks.shapes import assert_no_unbacked_symbols, input_shapes, traced_unbacked_origins, unbacked_origins
from judge.compiler.locations import register_learner_file

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


def rebuilt_without_sizes(gm):
    """`gm` as the verifier rebuilds it from a runner that recorded no sizes at all (a record hiding u0)."""
    from judge.shared import ir

    register_learner_file("solution.py", "solution.py")  # rebuilt stacks name the file as the learner knows it
    body = ir.to_ir(gm)
    for node in body["nodes"]:
        node["meta"].pop("value", None)
    return ir.from_ir(body)


def graph_inputs(gm, **values):
    """The values for a rebuilt graph's placeholders, by the argument each one stands for (l_x_ -> x)."""
    from judge.shared import ir

    return [values[node.name.removeprefix("l_").removesuffix("_")] for node in ir.placeholders(gm)]


@pytest.mark.parametrize("name, line", [("sliced", 5), ("boolean_index", 13)])
def test_data_dependent_sizes_are_found_here_without_the_runners_record(learner, name, line):
    x, n = torch.randn(6, 3), torch.tensor([2, 4])
    gm = rebuilt_without_sizes(graph_of(getattr(learner, name), x, n))
    assert unbacked_origins(gm) == []  # the record says nothing ...
    origins = traced_unbacked_origins(gm, graph_inputs(gm, x=x, n=n))  # ... the graph's own operations do
    assert origins and origins[0][0].startswith("u")
    with pytest.raises(GraphBreak, match=f"line {line}"):
        assert_no_unbacked_symbols([gm], inputs=[graph_inputs(gm, x=x, n=n)])


def test_a_mask_traced_here_has_no_unbacked_symbols(learner):
    x, n = torch.randn(6, 3), torch.tensor([2, 4])
    gm = rebuilt_without_sizes(graph_of(learner.masked, x, n))
    assert traced_unbacked_origins(gm, graph_inputs(gm, x=x, n=n)) == []
    assert_no_unbacked_symbols([gm], inputs=[graph_inputs(gm, x=x, n=n)])
