"""The verifier's side of the boundary: what hidden tests use to reach the learner's code in the runner.

A test holds a `Ref` (the `entry` fixture), calls it eagerly there (`entry(x)`, `call_printing`) or compiles it
there (`entry.compile(fullgraph=True, ...)`, a `RemoteCompiled`) and runs the graphs Dynamo captured here, on
its own inputs. One module per job:

    failures.py   what the runner's errors and its end mean for a check
    transport.py  RunnerClient: requests out, answers in, the replay cache
    context.py    GradingContext: one grading's shared state, made by the verifier (`grading()`)
    graphs.py     graphs from the runner rebuilt through the allowlist
    values.py     example inputs, arguments encoded, results decoded
    eager.py      eager calls, a module's state, graph breaks explained
    compiled.py   RemoteCompiled: the runner's graphs run here, sealed
    stages.py     your code or the compiler: a mismatching graph run again under each compiler stage
    refs.py       Ref and Ref.compile, the documented API

Each imports only modules above it in this list (tests/core/test_layers.py).
"""

from judge.remote.compiled import Call, RemoteCompiled
from judge.remote.context import GradingContext, begin, current, using
from judge.remote.eager import EagerResult, call, call_printing, explain, load_state, state
from judge.remote.failures import (
    YOUR_FUNCTION,
    YOUR_MODULE,
    LearnerError,
    MalformedGraph,
    Protocol,
    RunnerGone,
    raise_learner_error,
)
from judge.remote.graphs import Graph, rebuild
from judge.remote.refs import Ref, entry_ref, learner, public, put
from judge.remote.transport import MAX_NOTES, RunnerClient
from judge.remote.values import encode_arg, example_like


def grading() -> GradingContext:
    """The grading in progress (also the `grading` fixture): its runner, operator providers, exercise modules."""
    return current()


def reset_runner() -> None:
    """A fresh Dynamo state in the runner, sent with the next request (a test that needs one mid-way)."""
    current().reset_runner()


__all__ = [
    "MAX_NOTES", "YOUR_FUNCTION", "YOUR_MODULE", "Call", "EagerResult", "Graph", "GradingContext", "LearnerError",
    "MalformedGraph", "Protocol", "Ref", "RemoteCompiled", "RunnerClient", "RunnerGone", "begin", "call",
    "call_printing", "current", "encode_arg", "entry_ref", "example_like", "explain", "grading", "learner",
    "load_state", "public", "put", "raise_learner_error", "rebuild", "reset_runner", "state", "using",
]
