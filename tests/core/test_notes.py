"""Notes: what an object the exercise hands the learner sends to the verifier while a request is answered
(judge.runner_side.runner.tell_verifier), collected by the verifier for that request's answer
(judge.remote.RunnerClient)."""

from __future__ import annotations

import json
import os
import types

import pytest

from judge import remote
from judge.runner_side import runner


def _client_reading(messages: list[dict]) -> remote.RunnerClient:
    read, write = os.pipe()
    os.write(write, "".join(json.dumps(m) + "\n" for m in messages).encode())
    os.close(write)
    return remote.RunnerClient(lambda *a, **k: None, in_fd=read, deadline=float("inf"))


def test_an_answer_carries_the_notes_of_its_own_request_only():
    client = _client_reading([
        {"type": "note", "id": 0, "value": "from a request that timed out"},
        {"type": "note", "id": 1, "value": {"call": 1}},
        {"type": "note", "id": 1, "value": {"call": 2}},
        {"type": "response", "id": 1, "result": None, "notes": ["forged in the answer"]},
    ])
    answer = client._request("call")
    assert answer["notes"] == [{"call": 1}, {"call": 2}]


def test_too_many_notes_are_a_protocol_error():
    client = _client_reading([{"type": "note", "id": 1, "value": i} for i in range(remote.MAX_NOTES + 1)])
    with pytest.raises(remote.Protocol):
        client._request("call")


def test_the_runner_sends_a_note_with_the_id_of_the_request_it_answers(tmp_path):
    read, write = os.pipe()
    serving = runner.Runner({"source": "", "entry_point": "f"}, write, tmp_path)
    serving.public = types.SimpleNamespace(step=lambda x: (runner.tell_verifier({"x": x}), x + 1)[1])
    serving.serve([json.dumps({"id": 7, "op": "call", "target": {"public": "step"}, "args": {"tuple": [41]}})])
    os.close(write)
    lines = [json.loads(line) for line in os.read(read, 1 << 16).decode().splitlines()]
    assert lines[0] == {"type": "note", "id": 7, "value": {"x": 41}}
    assert lines[1]["type"] == "response" and lines[1]["id"] == 7 and lines[1]["result"] == 42


def test_a_note_outside_a_request_is_refused():
    with pytest.raises(RuntimeError, match="only be called while the judge is asking"):
        runner.tell_verifier("at import")
