"""Hidden tests for regional-compile: the whole stack compiled with fullgraph=True, the block traced once.

Stack() is built in the runner and given this side's weights; torch.compile(stack, fullgraph=True) runs there with
the judge's recording backend, and the one graph Dynamo captured comes back: its copies of the block are counted
on that graph (the top graph and each distinct subgraph it calls), and it runs here on this side's inputs and
weights, so the numbers compared are computed here.
"""

import torch

from judge import remote
from judge.checks import WrongAnswer, assert_same
from judge.reports.i18n import T
from judge.shared import ir

D = 16
# The structure is checked at 8 blocks and at a depth drawn per grading (a region used only for the depths the
# statement names, 8 and 12, was ACCEPTED).
DEEPER = (9, 20)
FULLGRAPH = T("`torch.compile(Stack(), fullgraph=True)`", zh="`torch.compile(Stack(), fullgraph=True)`")
MAX_COPIES = 2  # torch 2.13 inlines the region's first call and traces one subgraph for all the others


def weights(public, n, d=D):
    """This side's weights for a stack of n blocks of width d (drawn once per test from a fixed seed)."""
    generator = torch.Generator().manual_seed(1234 + n)
    reference = public.Stack(n, d)
    with torch.no_grad():
        for p in reference.parameters():
            p.copy_(torch.randn(p.shape, generator=generator) * 0.3)
    return reference


def compiled_stack(entry, public, n=8, d=D):
    """Stack(n, d) in the runner with this side's weights, compiled there under fullgraph=True; (session,
    reference)."""
    built = f"Stack({n})" if d == D else f"Stack({n}, {d})"
    module = entry(n, what=T.same(f"`{built}`")) if d == D else entry(n, d, what=T.same(f"`{built}`"))
    if not isinstance(module, remote.Ref):
        raise WrongAnswer(T("`{built}` returned `{kind}`, not a module", zh="`{built}` 返回了 `{kind}`，不是模块",
                            built=T.same(built), kind=type(module).__name__))
    reference = weights(public, n, d)
    state = {k: v.clone() for k, v in reference.state_dict().items()}
    remote.load_state(module, state, what=T.same(f"`{built}.load_state_dict(...)`"))
    session = module.compile(fullgraph=True, what=FULLGRAPH)
    session.state["target"] = state  # the graph reads this side's weights here
    return session, reference


def block_of(spec) -> int | None:
    """The block a graph input belongs to (`blocks.3.lin.weight` -> 3), or None."""
    name = str(spec.get("name", "")) if isinstance(spec, dict) and spec.get("kind") == "state" else ""
    parts = name.split(".")
    return int(parts[1]) if len(parts) > 2 and parts[0] == "blocks" and parts[1].isdigit() else None


def block_copies(graph) -> tuple[int, int]:
    """(copies of the block Dynamo traced, calls of subgraphs) in a captured graph, from where each block's weights
    go: a block whose weights feed an operation of the graph itself was traced inline (one copy each); a subgraph
    called with the weights of k blocks holds k copies, counted once however often it is called."""
    owner = {node: block_of(spec) for node, spec in zip(ir.placeholders(graph.gm), graph.inputs)}
    inline: set[int] = set()
    per_subgraph: dict[str, int] = {}
    calls = 0
    for node in graph.gm.graph.nodes:
        if node.op != "call_function":
            continue
        blocks = {owner[a] for a in node.args if isinstance(a, torch.fx.Node) and owner.get(a) is not None}
        if "invoke_subgraph" in str(node.target) and node.args and isinstance(node.args[0], torch.fx.Node):
            calls += 1
            key = str(node.args[0].target)
            per_subgraph[key] = max(per_subgraph.get(key, 0), len(blocks))
        else:
            inline |= blocks
    return len(inline) + sum(per_subgraph.values()), calls


def operations(gm: torch.fx.GraphModule, seen: set[int] | None = None) -> int:
    """Operations Dynamo traced: the graph's calls and those of each distinct subgraph it reads (counted once),
    without the calls of subgraphs and the picking of their results, which are one per layer by design."""
    seen = set() if seen is None else seen
    count = 0
    for node in gm.graph.nodes:
        if node.op in ("call_function", "call_method", "call_module") \
                and "invoke_subgraph" not in str(node.target) and "getitem" not in str(node.target):
            count += 1
        elif node.op == "get_attr":
            sub = getattr(gm, str(node.target), None)
            if isinstance(sub, torch.fx.GraphModule) and id(sub) not in seen:
                seen.add(id(sub))
                count += operations(sub, seen)
    return count


def test_one_graph(entry, public):
    """torch.compile(Stack(), fullgraph=True) captures one graph
    zh: torch.compile(Stack(), fullgraph=True) 只捕获一张图
    """
    session, _ = compiled_stack(entry, public)
    session(torch.randn(2, 8, D))
    if session.frame_count != 1:
        raise WrongAnswer(T("{what}: expected one graph, Dynamo captured {n}", zh="{what}：应当只有一张图，Dynamo 捕获了 {n} 张",
                            what=FULLGRAPH, n=session.frame_count))


def test_block_traced_once(entry, public):
    """The block is traced once and reused: at most 2 copies of it in the graph, for 8 blocks and for a deeper stack
    drawn per grading, and the deeper graph no larger
    zh: 块只追踪一次、反复复用：8 个块和每次评测抽取的更深的栈，图里都最多只有它的 2 份拷贝，更深的图也不更大
    """
    deeper = int(torch.randint(DEEPER[0], DEEPER[1] + 1, ()))
    traced = {}
    for n in (8, deeper):
        session, _ = compiled_stack(entry, public, n)
        session(torch.randn(2, 8, D))
        copies, calls = block_copies(session.graphs[0])
        if copies > MAX_COPIES:
            raise WrongAnswer(T(
                "for a stack of {n} blocks the graph holds {copies} copies of the block's computation ({calls} "
                "subgraph calls): Dynamo traced the block {copies} times. Mark the block as a nested compile region "
                "(`torch.compiler.nested_compile_region`): it is traced once and every block calls that subgraph "
                "(on torch 2.13 the first call is inlined: at most {limit} copies)",
                zh="{n} 个块的栈，图里有块的计算的 {copies} 份拷贝（调用子图 {calls} 次）：Dynamo 把块追踪了 {copies} 次。"
                   "把块标成嵌套编译区域（`torch.compiler.nested_compile_region`）：它只追踪一次，每个块都调用那个子图"
                   "（torch 2.13 会把第一次调用内联：最多 {limit} 份）",
                n=n, copies=copies, calls=calls, limit=MAX_COPIES))
        traced[n] = operations(session.graph_modules[0])
    # Whatever the weights are (parameters, or tensors the graph holds as constants), a block traced per layer
    # makes the graph grow with the depth; a region traced once does not.
    if traced[deeper] > traced[8]:
        raise WrongAnswer(T("the graph grows with the depth: {small} operations for 8 blocks, {large} for {n} (its "
                            "subgraphs included, each counted once): the block is traced for every layer. Mark it as "
                            "a nested compile region (`torch.compiler.nested_compile_region`)",
                            zh="图随层数增长：8 个块时 {small} 个运算，{n} 个块时 {large} 个（包括子图，每个只算一次）："
                               "每一层都追踪了一遍块。把它标成嵌套编译区域（`torch.compiler.nested_compile_region`）",
                            small=traced[8], large=traced[deeper], n=deeper))


def test_same_numbers(entry, public):
    """The compiled stack gives the eager stack's output, with the grader's weights, for two input shapes, and for
    stacks of 12 blocks and of 3 blocks of width 32
    zh: 编译后的栈在判题方的权重下给出与 eager 相同的输出：两种输入形状，以及 12 个块的栈和宽度为 32 的 3 个块的栈
    """
    for n, d, shapes in ((8, D, ((2, 8, D), (3, 5, D))), (12, D, ((2, 5, D),)), (3, 32, ((2, 4, 32),))):
        session, reference = compiled_stack(entry, public, n, d)
        for shape in shapes:
            x = torch.randn(shape)
            with torch.no_grad():
                expected = reference(x)
            assert_same(session(x), expected, case=T.same(f"x {list(shape)} float32, {n} blocks of width {d}"))
