"""The data that crosses the runner/verifier boundary: values round-trip, anything malformed is refused."""

import base64
import json

import pytest
import torch
from hypothesis import given, settings, strategies as st

from judge.shared import ir, wire

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.uint8,
          torch.bool]


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(0, 5), max_size=4), dtype=st.sampled_from(DTYPES), transpose=st.booleans())
def test_tensors_round_trip_with_dtype_shape_strides_and_values(shape, dtype, transpose):
    t = (torch.randn(shape) * 10).to(dtype)
    if transpose and t.dim() >= 2:
        t = t.transpose(0, 1)
    back = wire.decode(json.loads(json.dumps(wire.encode(t))))
    assert back.dtype == t.dtype and back.shape == t.shape and back.stride() == t.stride()
    assert torch.equal(back, t)


def test_values_round_trip():
    value = {"a": [1, 2.5, float("inf"), None, True, "s"], "b": (torch.float16, slice(1, None, 2), Ellipsis),
             "c": torch.device("cpu")}
    assert wire.decode(json.loads(json.dumps(wire.encode(value)))) == value


def _tensor(**change):
    body = {"dtype": "float32", "shape": [2, 2], "strides": [2, 1], "data": base64.b64encode(b"\0" * 16).decode()}
    return {"tensor": {**body, **change}}


@pytest.mark.parametrize("bad", [
    _tensor(data=base64.b64encode(b"\0" * 12).decode()),  # a byte count that does not fit the shape
    _tensor(shape=[2, -2]),
    _tensor(strides=[1 << 40, 1]),  # strides reaching far outside the data
    _tensor(dtype="object"),
    _tensor(data="not base64!"),
    {"tensor": {"dtype": "float32"}},
    {"eval": "os.system('x')"},  # an unknown tag
    _tensor(device="cpu; import os"),  # a device other than cuda / cuda:N
    _tensor(device="meta"),
    _tensor(device=["cuda"]),
    {"list": [1], "tuple": [2]},
])
def test_malformed_values_are_refused(bad):
    with pytest.raises(wire.WireError):
        wire.decode(bad)


def test_a_cuda_tensor_keeps_its_device_or_is_refused_where_there_is_no_gpu():
    body = _tensor(device="cuda:0")
    if not torch.cuda.is_available():
        with pytest.raises(wire.WireError, match="no CUDA device"):
            wire.decode(body)
        return
    t = torch.randn(3, 4, device="cuda").t()
    back = wire.decode(json.loads(json.dumps(wire.encode(t))))
    assert back.device == t.device and back.stride() == t.stride() and torch.equal(back, t)
    assert wire.decode(body).device.type == "cuda"


def test_deep_nesting_and_huge_containers_are_refused():
    deep = 0
    for _ in range(wire.MAX_DEPTH + 5):
        deep = {"list": [deep]}
    with pytest.raises(wire.WireError, match="deeply"):
        wire.decode(deep)
    with pytest.raises(wire.WireError, match="too many"):
        wire.decode({"list": list(range(wire.MAX_ITEMS + 1))})


def captured(fn, *args):
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    torch.compile(fn, backend=backend, fullgraph=True)(*args)
    return graphs[0]


def test_a_dynamo_graph_with_cond_rebuilds_and_computes_the_same():
    def step(x, w):
        h = x @ w
        return torch.cond(h.sum() > 0, lambda h: h * 2, lambda h: h.clone(), (h,)).relu()

    x, w = torch.randn(4, 8), torch.randn(8, 3)
    rebuilt = ir.from_ir(json.loads(json.dumps(ir.to_ir(captured(step, x, w)))))
    for sign in (1, -1):
        assert torch.equal(rebuilt(sign * x, w)[0], step(sign * x, w))


def graph_calling(target: str, op: str = "call_function") -> dict:
    return {"version": 1, "attrs": {}, "subgraphs": {}, "nodes": [
        {"name": "x", "op": "placeholder", "target": "x", "args": {"tuple": []}, "kwargs": {"dict": {}}},
        {"name": "y", "op": op, "target": target, "args": {"tuple": [{"node": "x"}]}, "kwargs": {"dict": {}}},
        {"name": "output", "op": "output", "target": "output", "args": {"tuple": [{"node": "y"}]},
         "kwargs": {"dict": {}}}]}


@pytest.mark.parametrize("target", ["builtins.eval", "builtins.exec", "os.system", "submission.step",
                                    "torch.load", "torch.save", "torch.ops.aten.from_file.default",
                                    "torch.ops.mylib.op.default", "operator.attrgetter", "subprocess.run",
                                    "torch.manual_seed", "torch.compile"])
def test_targets_outside_the_allowlist_are_refused(target):
    with pytest.raises(ir.NotAllowed):
        ir.from_ir(graph_calling(target))


@pytest.mark.parametrize("method", ["__class__", "__reduce_ex__", "numpy", "register_hook", "storage", "format"])
def test_methods_outside_the_allowlist_are_refused(method):
    with pytest.raises(ir.NotAllowed):
        ir.from_ir(graph_calling(method, op="call_method"))


@pytest.mark.parametrize("target", ["torch.relu", "_operator.neg", "torch.ops.aten.relu.default", "math.sqrt"])
def test_tensor_operations_are_allowed(target):
    assert isinstance(ir.from_ir(graph_calling(target)), torch.fx.GraphModule)


def test_an_operator_namespace_is_allowed_only_where_the_exercise_declares_it():
    spec = graph_calling("torch.ops.aten.relu.default")
    ir.from_ir(spec, op_namespaces=("practice",))
    with pytest.raises(ir.NotAllowed):
        ir.from_ir(graph_calling("torch.ops.practice.attention"))


@pytest.mark.parametrize("name", ["__import__", "x; import os", "class", "a" * 100, "0x"])
def test_bad_node_names_are_refused(name):
    spec = graph_calling("torch.relu")
    spec["nodes"][1]["name"] = name
    with pytest.raises(ir.IRError):
        ir.from_ir(spec)


def test_too_many_nodes_and_forward_references_are_refused():
    spec = graph_calling("torch.relu")
    spec["nodes"][1:1] = [{"name": f"n{i}", "op": "call_function", "target": "torch.relu",
                           "args": {"tuple": [{"node": "x"}]}, "kwargs": {"dict": {}}} for i in range(ir.MAX_NODES)]
    with pytest.raises(ir.IRError, match="more than"):
        ir.from_ir(spec)
    later = graph_calling("torch.relu")
    later["nodes"][1]["args"] = {"tuple": [{"node": "output"}]}
    with pytest.raises(ir.IRError, match="before it is defined"):
        ir.from_ir(later)


def test_a_view_with_gaps_travels_as_the_dense_tensor_it_reads():
    base = torch.arange(8 * 512, dtype=torch.float32).reshape(8, 512)
    view = base[:, :12]  # strides [512, 1]: they reach far past its 96 elements
    back = wire.decode_tensor(wire.encode_tensor(view))
    assert torch.equal(back, view) and back.stride() == (12, 1)
    transposed = torch.randn(3, 5).t()
    assert wire.decode_tensor(wire.encode_tensor(transposed)).stride() == transposed.stride()


def test_a_graph_described_while_dynamo_still_holds_it_names_its_inputs_sources():
    # Inside the backend each placeholder still carries Dynamo's GraphArg, whose source name is a property on 2.13
    import torch

    from judge.shared import ir

    described = []
    torch._dynamo.reset()
    torch.compile(lambda x: x + 1, backend=lambda gm, _: described.append(ir.to_ir(gm)) or gm.forward)(torch.ones(2))
    placeholders = [n for n in described[0]["nodes"] if n.get("op") == "placeholder"]
    assert [n["meta"].get("source") for n in placeholders] == ["L['x']"]
