"""One grading's shared state on the verifier's side, in one object made by the verifier for its run.

Hidden tests reach it through the `grading` fixture (judge/verifier_side/fixtures.py) or `judge.remote.grading()`; the
judge's
own modules through `current()`. It holds the line to the runner, the operator namespaces and providers a rebuilt
graph may call, the exercise's own modules (reference, starter, public), the compiler's view being collected,
the contract, and the playground's findings.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING

import torch

from judge.remote.transport import RunnerClient
from judge.shared.loaded import Loaded

if TYPE_CHECKING:
    from judge.verifier_side.compiler_view import ViewBuilder

# provide(name, overload): registers torch.ops.<namespace>.<name>.<overload> here with the exercise's own code
OperatorProvider = Callable[[str, str], None]


@dataclass
class GradingContext:
    """What the hidden tests of one verifier run share (made once per run by `judge.verifier_side.verifier.run`)."""

    client: RunnerClient | None = None
    op_namespaces: tuple[str, ...] = ()  # operator namespaces besides aten/prims a rebuilt graph may call
    contract: dict | None = None  # the exercise's [contract] (judge/checks/contract.py)
    view: ViewBuilder | None = None  # the compiler's view being collected (judge/verifier_side/compiler_view.py)
    exercise: Loaded = field(default_factory=Loaded)  # reference, starter, public: imported here on first use
    op_providers: dict[str, OperatorProvider] = field(default_factory=dict)
    playground_findings: dict | None = None  # a playground run's findings (judge/verifier_side/playground.py)
    sessions: int = 0  # compile sessions opened so far (each names its own in the runner)
    # where a GPU exercise's tests put their tensors: "cpu" in its CPU tier (judge/shared/tiers.py)
    device: str = "cuda"
    # the grading's draw (judge/shared/draw.py): each test's inputs and the runner's examples come from it
    seed: int = 0
    last_run: object = None  # the last captured graph run here (judge.remote.compiled.LastRun): a mismatch's stages
    reuse_compiled: bool = True  # Ref.compile(reuse=True) shares compile sessions between tests (False: never)
    narrowed: bool = False  # compiler_bisector ran in this grading already (judge/remote/stages.py: once at most)
    _examples: torch.Generator | None = field(default=None, repr=False)

    def examples(self) -> torch.Generator:
        """The generator of the example values the runner is sent in place of hidden inputs: a stream of its own,
        so that what the runner sees says nothing of the tests' draws."""
        if self._examples is None:
            from judge.shared.draw import stream

            self._examples = torch.Generator().manual_seed(stream(self.seed, "examples"))
        return self._examples

    def drawn(self, name: str) -> torch.Generator:
        """A fresh generator for the part `name` of this grading's draw (e.g. the shape a cost is measured on): the
        same for the same file on the same exercise version, unknown to any file before it is graded."""
        from judge.shared.draw import stream

        return torch.Generator().manual_seed(stream(self.seed, name))

    @property
    def runner(self) -> RunnerClient:
        """The line to the runner; a clear error where this context has none (a test run outside a grading)."""
        if self.client is None:
            raise RuntimeError("this grading context has no runner: judge.verifier_side.verifier makes one for each "
                               "grading")
        return self.client

    def new_session(self) -> str:
        """A fresh name for one compile session in the runner."""
        self.sessions += 1
        return f"s{self.sessions}"

    def reset_runner(self) -> None:
        """A fresh Dynamo state in the runner (before each hidden test), sent with the test's first request."""
        if self.client is not None:
            self.client.reset()

    def provide_operators(self, namespace: str, provide: OperatorProvider) -> None:
        """An exercise about a learner-registered operator: before a graph calling `namespace::name.overload` is
        rebuilt, `provide(name, overload)` registers the verifier's own implementation (never the learner's
        kernel). The namespace must also be in the exercise's `op_namespaces`."""
        self.op_providers[namespace] = provide

    def exercise_module(self, name: str) -> ModuleType:
        """The exercise's "reference", "starter" or "exercise_public" module, imported here on first use."""
        return self.exercise.exercise_module(name)


_current: list[GradingContext] = [GradingContext()]  # the innermost is the grading in progress


def current() -> GradingContext:
    """The grading in progress (an empty context, without a runner, where none was begun)."""
    return _current[-1]


def begin(**fields) -> GradingContext:
    """Make the context of this process's grading (the verifier does, once per run) and make it current."""
    context = GradingContext(**fields)
    _current[:] = [context]
    return context


@contextlib.contextmanager
def using(context: GradingContext) -> Iterator[GradingContext]:
    """`context` is current inside the block (the judge's own tests grade without a verifier run)."""
    _current.append(context)
    try:
        yield context
    finally:
        _current.remove(context)
