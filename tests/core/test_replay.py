"""A test that repeats an earlier test's compile calls gets the runner's earlier answers (judge/remote/transport.py:
RunnerClient.request); the runner catches up, and must answer the same, once the test asks something new."""

from __future__ import annotations

import pytest

from judge import remote


class Runner:
    """Stands in for the runner: answers each compile with a graph named after its key and a counter."""

    def __init__(self):
        self.sent: list[tuple[str, object]] = []
        self.drift = 0  # > 0: the same call compiles to another graph from now on (state kept between calls)

    def __call__(self, op, **fields):
        self.sent.append((op, fields.get("key")))
        if op != "compile":
            return {}
        return {"graphs": [{"index": 0, "ir": f"{fields['key']}-{self.drift}"}], "ran": [0], "error": None}


@pytest.fixture
def client(monkeypatch):
    runner = Runner()
    made = remote.RunnerClient(lambda *a, **k: None, in_fd=-1, deadline=0.0)
    monkeypatch.setattr(made, "_request", runner)
    made.runner = runner
    return made


def compile_(client, key):
    return client.request("compile", replay_key=("compile", key), key=key)


def test_a_repeated_sequence_is_answered_without_the_runner(client):
    client.reset()
    first = compile_(client, "x[4,16] f32")
    client.reset()
    again = compile_(client, "x[4,16] f32")
    assert again == first and client.runner.sent == [("reset", None), ("compile", "x[4,16] f32")]
    assert not client.sent_since_reset  # nothing reached the runner in the second test: no tamper check needed


def test_a_new_call_after_replayed_ones_first_brings_the_runner_up_to_date(client):
    client.reset()
    compile_(client, "a")
    client.reset()
    compile_(client, "a")  # replayed
    compile_(client, "b")  # new: the runner gets a fresh state, then "a" again, then "b"
    assert client.runner.sent == [("reset", None), ("compile", "a"), ("reset", None), ("compile", "a"),
                                  ("compile", "b")]


def test_code_that_compiles_differently_the_second_time_fails(client):
    client.reset()
    compile_(client, "a")
    client.reset()
    compile_(client, "a")
    client.runner.drift = 1
    with pytest.raises(remote.LearnerError, match="compiled differently"):
        compile_(client, "b")


def test_any_other_request_ends_replay_for_the_rest_of_the_test(client):
    client.reset()
    compile_(client, "a")
    client.reset()
    client.request("call", key="eager")  # an eager call may change what the learner's code compiles next
    compile_(client, "a")
    assert client.runner.sent[-2:] == [("call", "eager"), ("compile", "a")]


def test_an_answer_that_was_an_error_is_never_replayed(client):
    client.runner.__class__ = type("Failing", (Runner,), {"__call__": lambda self, op, **f: (
        self.sent.append((op, f.get("key"))) or ({"error": {"kind": "error"}} if op == "compile" else {}))})
    client.reset()
    compile_(client, "a")
    client.reset()
    compile_(client, "a")
    assert [op for op, _ in client.runner.sent].count("compile") == 2


def test_a_compile_is_keyed_by_shapes_and_dtypes_never_by_values(client):
    import torch

    with remote.using(remote.GradingContext(client=client)):
        compiled = remote.entry_ref().compile(fullgraph=True)

    def key(*args, values_matter=False):
        fields = dict(target=compiled.target.spec, args=remote.encode_arg(tuple(args)),
                      kwargs=remote.encode_arg({}), mark_dynamic=[])
        return compiled._replay_key(fields, values_matter)

    x = torch.randn(4, 16)
    assert key(x) == key(torch.randn(4, 16)) != key(torch.randn(4, 8)) != key(x.double())
    assert key(x, 2) != key(x, 3)  # a Python number is part of what Dynamo guards on
    assert key(x, values_matter=True) is None  # the runner saw the real values (keep=True, explicit examples)
    assert key(remote.Ref({"handle": "h0"})) is None  # an object kept in the runner may have changed
