"""Compile sessions shared between hidden tests (`Ref.compile(reuse=True)`, judge/remote/transport.py): a test that
asks for nothing else goes on from the compiler state earlier tests left; that state never reaches a test that asks
for something else, one after a recompile that shapes do not explain, or a check that failed on it."""

from __future__ import annotations

import pytest
import torch

from judge import remote
from judge.remote import transport
from judge.remote.compiled import RemoteCompiled


class Runner:
    """Stands in for the runner: a session's first call of a signature captures a graph, later calls run it; with
    `counter`, each call captures a new one (code whose graph depends on how often it ran); a session that served
    `limit` calls runs no graph (as where Dynamo's recompile_limit is reached: the call runs eagerly)."""

    def __init__(self):
        self.sent: list[tuple[str, object]] = []
        self.sessions: dict[str, list[str]] = {}
        self.calls: dict[str, int] = {}
        self.counter = False
        self.limit = 100

    def __call__(self, op, **fields):
        self.sent.append((op, fields.get("session")))
        if op == "reset":
            self.sessions.clear()
            self.calls.clear()
        if op != "compile":
            return {}
        graphs = self.sessions.setdefault(fields["session"], [])
        shape = str(fields["args"])
        self.calls[fields["session"]] = self.calls.get(fields["session"], 0) + 1
        if self.calls[fields["session"]] > self.limit:
            return {"graphs": [], "ran": [], "error": None}
        if self.counter or shape not in graphs:
            graphs.append(shape)
            index = len(graphs) - 1
            return {"graphs": [{"index": index, "ir": shape, "inputs": []}], "ran": [index], "error": None}
        return {"graphs": [], "ran": [graphs.index(shape)], "error": None}


@pytest.fixture
def client(monkeypatch):
    runner = Runner()
    made = remote.RunnerClient(lambda *a, **k: None, in_fd=-1, deadline=0.0)
    monkeypatch.setattr(made, "_request", runner)
    made.runner = runner
    return made


def shared(client, shape, key="k"):
    """One call in a shared session, its graphs accepted (as RemoteCompiled does once it rebuilt them)."""
    generation, session, answer = client.shared_compile(key, shape, args=shape)
    session.graphs += answer["graphs"]
    return generation, session, answer


def resets(client) -> int:
    return [op for op, _ in client.runner.sent].count("reset")


def test_the_next_test_goes_on_from_the_shared_state(client):
    client.reset()
    shared(client, "[4,16]")
    client.reset()
    generation, session, answer = shared(client, "[4,16]")
    assert resets(client) == 1 and answer["graphs"] == [] and answer["ran"] == [0]
    assert client.carried and session.name.startswith(transport.SHARED)


def test_the_shared_state_never_reaches_a_request_of_another_kind(client):
    client.reset()
    shared(client, "[4,16]")
    client.reset()
    shared(client, "[4,16]")  # this test goes on from the shared state ...
    client.request("compile", session="s1", args="[4,16]")  # ... until it asks something else: a fresh state first
    assert client.runner.sent[-2:] == [("reset", None), ("compile", "s1")]
    client.reset()
    shared(client, "[4,16]")  # and a fresh session's activity is never carried into the next test either
    assert client.runner.sent[-2] == ("reset", None)


def test_a_recompile_for_a_signature_already_compiled_ends_the_sharing(client):
    client.runner.counter = True
    client.reset()
    shared(client, "[4,16]")
    shared(client, "[4,16]")  # compiled again: its graph depends on more than the arguments' shapes
    client.reset()
    shared(client, "[4,16]")
    assert resets(client) == 2 and not client.carried


def test_a_state_with_many_graphs_is_not_carried_into_another_test(client):
    client.reset()
    for n in range(transport.MAX_SHARED_GRAPHS):
        shared(client, f"[{n + 1},16]")
    client.reset()
    shared(client, "[1,16]")
    assert resets(client) == 2


def test_a_call_that_failed_on_a_carried_state_is_made_again_from_a_fresh_one(client):
    """A call that fails on the state earlier tests left (here: the session ran out of what it may compile, as code
    that compiles again at each call runs out of Dynamo's recompile limit sooner on a state other tests filled) is
    made again from a fresh state: the check sees what it would have seen without sharing."""
    client.runner.limit = 3
    context = remote.GradingContext(client=client)
    with remote.using(context):
        for _ in range(3):
            client.reset()
            compiled = remote.entry_ref().compile(fullgraph=True, reuse=True)
            for _ in range(2):
                assert compiled(torch.ones(2)) == "ran"  # never "one call ran 0 graphs"
            assert compiled.frame_count >= 1
    assert resets(client) == 3  # the first test's, then one drop in each later test (the 3rd call, the 5th)


def test_sharing_off_keeps_every_test_fresh(client):
    context = remote.GradingContext(client=client, reuse_compiled=False)
    with remote.using(context):
        for _ in range(2):
            client.reset()
            compiled = remote.entry_ref().compile(fullgraph=True, reuse=True)
            assert not compiled.reuse
            compiled(torch.ones(2))
    assert all(not str(s).startswith(transport.SHARED) for _, s in client.runner.sent)  # (the second replayed)


@pytest.fixture(autouse=True)
def _graphs_as_text(monkeypatch):
    """The fake runner's graphs are strings: rebuilding one gives a graph of no placeholder, running it "ran"."""
    import torch.fx

    from judge.remote import compiled as module

    def rebuild(body):
        graph = torch.fx.Graph()
        graph.output(None)
        return torch.fx.GraphModule(torch.nn.Module(), graph)

    monkeypatch.setattr(module, "rebuild", rebuild)
    monkeypatch.setattr(RemoteCompiled, "run_graph", lambda self, index, args, kwargs, spec: "ran")


@pytest.mark.slow
def test_state_a_reused_session_carries_never_decides_a_verdict(local):
    """graph-break-step graded with a solution that keeps state between calls (a list it appends to: Dynamo guards on
    its length and compiles again at every call), with the value tests sharing one compile session and with every
    test from a fresh state: the same verdict for every check. Shared naively, the session reaches Dynamo's
    recompile limit in the fifth test and every later check fails to compile (COMPILE_ERROR); dropping the shared
    state where a signature compiled again, and making a failed call again from a fresh state, keeps it out."""
    from pathlib import Path

    from judge import grade, load_exercise
    from judge.shared.paths import EXERCISES_DIR

    exercise = load_exercise(EXERCISES_DIR / "graph-break-step")
    source = (Path(__file__).parent / "submissions" / "counts_its_calls.py").read_text()
    shared_report, fresh_report = (grade(exercise, source, sandbox=local, reuse_compiled=reuse)
                                   for reuse in (True, False))
    verdicts = [[(c.name, c.verdict) for c in r.checks] for r in (shared_report, fresh_report)]
    assert verdicts[0] == verdicts[1] and shared_report.accepted, verdicts[0]
