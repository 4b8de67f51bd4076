"""`Ref`: what a hidden test holds of the learner's code, and the one way to compile it (`Ref.compile`).

A `Ref` names an object that lives in the runner (the entry point, another name the learner's file defines,
the exercise's public module's objects, a result the runner kept). Calling it runs it eagerly there;
`compile(...)` compiles it there and runs the graphs it captures here.
"""

from __future__ import annotations

from collections.abc import Callable

import torch.fx

from judge.remote.compiled import RemoteCompiled
from judge.remote.context import current
from judge.remote.eager import call
from judge.remote.failures import YOUR_FUNCTION, Protocol, raise_learner_error
from judge.remote.values import RunnerObject, encode_arg
from judge.reports.i18n import T
from judge.shared.protocol import Request

RUNNER_OPTIONS = ("fullgraph", "dynamic")  # what the runner passes to torch.compile (judge/runner_side/compiling.py)
VERIFIER_OPTIONS = ("what", "local_backend", "mutates_args", "rewrite_graph", "learner_compiled", "learner_backend",
                    "reuse")


class Ref(RunnerObject):
    """Something that lives in the runner: the entry point, a public object, a kept result."""

    def __call__(self, *args, **kwargs):
        """An eager call in the runner (it sees these arguments): the result (`judge.remote.call`)."""
        return call(self, *args, **kwargs)

    def compile(self, *, fullgraph: bool = False, dynamic: bool | None = None, what=YOUR_FUNCTION,
                local_backend=None, mutates_args=(),
                rewrite_graph: Callable[[torch.fx.GraphModule], None] | None = None,
                learner_compiled: bool = False, learner_backend: bool = False, reuse: bool = False,
                **unknown) -> RemoteCompiled:
        """`torch.compile(self, fullgraph=..., dynamic=...)` in the runner; calls run the captured graph here.

        The verifier's side:
        - `what`: how messages name the compiled function (a `T`, or code such as "`serve`");
        - `local_backend`: compile each rebuilt graph here with it, once, and run that ("inductor", "aot_eager",
          a `CompileCounter`, `reduce_overhead_backend()`): kernels, counters and CUDA graphs are the verifier's;
        - `mutates_args`: the arguments (positions or keyword names) meant to be updated in place (a cache):
          their changes reach the caller's tensors; a change to any other input fails the call;
        - `rewrite_graph`: called once on each rebuilt graph before it first runs here (e.g. to send a provided
          operator's nodes to the test's own implementation);
        - `learner_compiled`: the target is already a `torch.compile` result of the learner's code: the runner
          records its graphs with the learner's own options (then `fullgraph` and `dynamic` are not given);
        - `learner_backend`: as `learner_compiled`, but the learner's code compiled with the backend the exercise
          handed it (`judge.runner_side.compiling.recording_backend`, from its public module) instead of having it
          swapped in with `force_backend`, which bypasses the function's own `recompile_limit`;
        - `reuse`: the runner compiles in a session shared with the grading's other tests that compile this target
          with these options (`fullgraph`, `dynamic`), going on from the compiler state they left where Dynamo's
          guards allow it, instead of from a fresh state (judge/remote/transport.py says when the state is dropped).
          For a test that checks values only: `frame_count` and `graph_modules` then include the graphs other tests
          captured, and the recompiles it sees are not those of a fresh compile. A test about a recompile, a cold
          compile or how many graphs were captured leaves it off.
        Any other option is a TypeError: the runner honours only `fullgraph` and `dynamic`."""
        if unknown:
            names = ", ".join(f"`{name}`" for name in sorted(unknown))
            raise TypeError(f"Ref.compile() does not take {names}: the runner compiles with {RUNNER_OPTIONS} only, "
                            f"and the verifier's side takes {VERIFIER_OPTIONS} (for a backend or a mode, compile the "
                            "captured graph here with local_backend=...)")
        if learner_compiled or learner_backend:
            if fullgraph or dynamic is not None:
                raise TypeError("Ref.compile(learner_compiled=True) keeps the learner's own options: give neither "
                                "fullgraph nor dynamic")
            options: dict = {"learner_backend": True} if learner_backend else {"force_backend": True}
        else:
            options = {"fullgraph": bool(fullgraph), "dynamic": dynamic}
        return RemoteCompiled(self, options, what=what, local_backend=local_backend, mutates_args=mutates_args,
                              rewrite_graph=rewrite_graph, reuse=reuse)


def entry_ref() -> Ref:
    """The learner's entry point (the `entry` fixture)."""
    return Ref({"entry": True})


def public(name: str) -> Ref:
    """An object of the exercise's public module, as the runner holds it."""
    return Ref({"public": name})


def learner(name: str) -> Ref:
    """Another name the learner's file defines."""
    return Ref({"learner": name})


def put(value, what=T("the judge's value")) -> Ref:
    """Send `value` to the runner and keep it there: a Ref that later requests pass as that same object (a
    tensor the learner's code marks dynamic, then serves). The runner sees `value`: send `example_like(...)`."""
    answer = current().runner.request(Request.KEEP, value=encode_arg(value))
    if answer.get("error"):
        raise_learner_error(answer["error"], what)
    if not isinstance(answer.get("handle"), str):
        raise Protocol(T("malformed handle"))
    return Ref({"handle": answer["handle"]})
