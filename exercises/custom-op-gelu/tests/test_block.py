"""Hidden tests for custom-op-gelu: one graph with an ext.* op, its fake implementation, same numbers under
dynamic shapes.

The learner's ext operator lives in the runner; the judge never runs it. Before a graph that calls
`torch.ops.ext.<name>` is rebuilt here, the judge registers that name here with its own implementation: the
vendor kernel of the starter (`fast_gelu_ext`) and a fake that returns `empty_like(x)`. So every number
compared below is computed here. The learner's fake implementation is judged from what Dynamo recorded while
tracing with it (the op node's output shape and dtype in the captured graph), against the vendor kernel's real
output here; torch.library.opcheck, run on the learner's op in the runner (public.py), and an eager call of
the learner's block there can only make a check fail.
"""

import torch
import torch.fx

from judge import remote
from judge.checks import Forbidden, WrongAnswer, assert_same, compile_one_graph, describe_tensor
from judge.checks.custom_ops import OPCHECK_MEANING, assert_calls_custom_op
from judge.loaded import LOADED
from judge.report import GraphDiagnostic

# (case, x and w whose product is the op's input): a [4, 8] float32, a [3, 5] float64, an empty and a 3-d input
OPCHECK_CASES = [
    ("x [4, 8] float32", lambda: (torch.randn(4, 6), torch.randn(6, 8))),
    ("x [3, 5] float64", lambda: (torch.randn(3, 6, dtype=torch.float64), torch.randn(6, 5, dtype=torch.float64))),
    ("x [0, 8] float32 (empty)", lambda: (torch.randn(0, 6), torch.randn(6, 8))),
    ("x [2, 3, 4] float32", lambda: (torch.randn(2, 3, 6), torch.randn(6, 4))),
]
SHAPES = [((4, 8), (8, 8)), ((1, 3), (3, 5)), ((7, 16), (16, 2)), ((5, 4), (4, 6))]

# ---------------------------------------------------------------- the judge's own implementation of ext ops

_LIB = torch.library.Library("ext", "FRAGMENT")  # noqa: TOR901 - the verifier's own registrations
_PROVIDED: set[str] = set()


def vendor_kernel(x: torch.Tensor) -> torch.Tensor:
    """The starter's fast_gelu_ext: what the learner's op must wrap."""
    return LOADED.exercise_module("starter").fast_gelu_ext(x)


def provide_ext(name: str, overload: str) -> None:
    """Register torch.ops.ext.<name>.<overload> here as (Tensor x) -> Tensor: the vendor kernel, and a fake."""
    qualified = name if overload == "default" else f"{name}.{overload}"
    if qualified in _PROVIDED:
        return
    _PROVIDED.add(qualified)
    _LIB.define(f"{qualified}(Tensor x) -> Tensor")
    _LIB.impl(qualified, vendor_kernel, "CPU")
    torch.library.register_fake(f"ext::{qualified}", lambda x: torch.empty_like(x), lib=_LIB)


remote.OP_PROVIDERS["ext"] = provide_ext

# ---------------------------------------------------------------- helpers


def captured_graph(entry, x, w):
    """The one graph Dynamo captures for block(x, w) (static shapes), rebuilt here."""
    try:
        return compile_one_graph(entry, x, w, dynamic=False, what="torch.compile(block, fullgraph=True)").graphs[0]
    except Forbidden as exc:
        called = getattr(exc, "called", "") or ""
        if not called.startswith("torch.ops."):
            raise
        raise WrongAnswer(f"the graph of block calls no operator in the `ext` namespace (it calls {called}, in "
                          "another namespace): register the kernel with torch.library.custom_op(\"ext::<name>\", "
                          "...) and call that op.") from None


def ext_node(entry, x, w) -> tuple[torch.fx.Node, torch._ops.OpOverload]:
    """The graph's one ext.* node; it must take the one tensor x @ w, as fast_gelu_ext does."""
    gm = captured_graph(entry, x, w)
    found = assert_calls_custom_op(gm, "ext", what="the graph of block")
    node, op = found[0]
    if len(node.args) != 1 or not isinstance(node.args[0], torch.fx.Node) or node.kwargs:
        raise WrongAnswer(f"the graph calls {op} with {len(node.args) + len(node.kwargs)} arguments; the op wraps "
                          "fast_gelu_ext, so it takes one tensor (x @ w) and returns one tensor.",
                          [GraphDiagnostic(title="captured graph", code=gm.code.strip(), highlight=[node.name])])
    return node, op


def recorded_value(node: torch.fx.Node) -> dict:
    """What Dynamo recorded for a node's value while tracing: {"shape": [...], "dtype": "float32"}."""
    value = node.meta.get("ir", {}).get("value")
    return value if isinstance(value, dict) else {}


def assert_fake_matches(node, op, sample: torch.Tensor, case: str) -> None:
    """The learner's fake output (recorded by Dynamo) has the shape and dtype of the vendor kernel's output."""
    real = vendor_kernel(sample)
    fake = recorded_value(node)
    real_text = f"{str(real.dtype).removeprefix('torch.')} {list(real.shape)}"
    fake_text = f"{fake.get('dtype', '?')} {fake.get('shape', '?')}"
    if fake.get("shape") != list(real.shape) or fake.get("dtype") != str(real.dtype).removeprefix("torch."):
        raise WrongAnswer(f"torch.library.opcheck({op}) on {case}: test_faketensor failed: "
                          f"{OPCHECK_MEANING['test_faketensor']}. While tracing, your fake implementation said the "
                          f"output is {fake_text}; the kernel returns {real_text}.")


def assert_learner_opcheck(op, sample: torch.Tensor, case: str) -> None:
    """torch.library.opcheck on the learner's own op, in the runner: a failure it reports fails the check."""
    results = remote.call(remote.public("opcheck"), op._opname, op._overloadname, sample,
                          what=f"torch.library.opcheck({op})")
    if not isinstance(results, dict):
        raise remote.Protocol("malformed opcheck report")
    for test, outcome in results.items():
        if outcome == "SUCCESS":
            continue
        detail = str(outcome).strip().splitlines()[0][:400] if str(outcome).strip() else ""
        if test == "opcheck":
            raise WrongAnswer(f"torch.library.opcheck({op}) on {case} failed: {detail}")
        meaning = OPCHECK_MEANING.get(str(test), "")
        raise WrongAnswer(f"torch.library.opcheck({op}) on {case}: {test} failed: {meaning}. Detail: {detail}")


def case_of(x, w) -> str:
    return f"{describe_tensor('x', x)}, {describe_tensor('w', w)}"


# ---------------------------------------------------------------- checks


def test_one_graph_with_ext_op(entry):
    """torch.compile(block, fullgraph=True) captures one graph that calls an ext.* operator"""
    ext_node(entry, torch.randn(4, 8), torch.randn(8, 8))


def test_opcheck(entry):
    """torch.library.opcheck passes for the ext op on float32, float64, an empty and a 3-d input"""
    _, op = ext_node(entry, torch.randn(4, 8), torch.randn(8, 8))
    for case, make in OPCHECK_CASES:
        x, w = make()
        sample = x @ w
        assert_learner_opcheck(op, sample, case)
        node, _ = ext_node(entry, x, w)  # Dynamo traces block with your fake on an input of this kind
        assert_fake_matches(node, op, sample, case)


def test_same_numbers_dynamic(entry, starter):
    """With dynamic=True the compiled block equals the original for several shapes"""
    fn = entry.compile(fullgraph=True, dynamic=True)
    for x_shape, w_shape in SHAPES:
        x, w = torch.randn(x_shape), torch.randn(w_shape)
        expected = starter.block(x, w)
        assert_same(fn(x, w), expected, case=case_of(x, w))
    # Your op's own kernel, called eagerly in your process on these inputs: it can only fail the check.
    for x_shape, w_shape in SHAPES[:2]:
        x, w = torch.randn(x_shape), torch.randn(w_shape)
        expected = starter.block(x, w)
        assert_same(remote.call(entry, x, w, what="block (eager, with your op's kernel)"), expected,
                    case=f"{case_of(x, w)}, block called eagerly with your op's own kernel")


def test_float64_and_empty(entry, starter):
    """float64 inputs give float64 results, and an empty batch gives an empty result"""
    fn = entry.compile(fullgraph=True, dynamic=True)
    for x, w in [(torch.randn(6, 4, dtype=torch.float64), torch.randn(4, 3, dtype=torch.float64)),
                 (torch.randn(0, 4), torch.randn(4, 3))]:
        expected = starter.block(x, w)
        assert_same(fn(x, w), expected, case=case_of(x, w))
