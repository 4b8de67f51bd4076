"""The runner/verifier protocol is declared once (judge.shared.protocol) and every party speaks exactly that."""

import ast
import json
import os
from pathlib import Path

import pytest

from judge.runner_side.runner import Runner
from judge.shared import protocol
from judge.shared.learner_errors import describe, kind_of
from judge.shared.protocol import ErrorKind, Request, RunnerEnd, RunnerSays, TrustedSays, VerifierSays
from sandbox.jsonlines import Lines, Splitter, parse_line

ROOT = Path(__file__).resolve().parents[2]
KINDS = [*VerifierSays, *RunnerSays, *TrustedSays, *Request]
PARTIES = ["judge/runner_side/runner.py", "judge/verifier_side/verifier.py", "judge/parent/grading.py",
           "judge/parent/outcome.py", "judge/child.py", "judge/runner_side/compiling.py",
           "judge/verifier_side/plugin.py", "judge/shared/learner_errors.py", "judge/verifier_side/playground.py",
           *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "judge" / "remote").glob("*.py")
             if p.name != "__init__.py")]  # the package's __init__ only re-exports (its __all__ names functions)


def test_a_message_carries_only_the_fields_its_kind_declares():
    assert protocol.message(VerifierSays.COLLECTED, names=["a"]) == {"type": "collected", "names": ["a"]}
    with pytest.raises(ValueError, match="VerifierSays.DONE has no field names"):
        protocol.message(VerifierSays.DONE, names=[])


def test_kinds_travel_as_their_wire_names():
    assert json.loads(json.dumps(protocol.message(RunnerSays.LOADED))) == {"type": "loaded"}
    assert protocol.kind_of({"type": "check"}, VerifierSays) is VerifierSays.CHECK
    for untrusted in ({"type": ["check"]}, {"type": "checks"}, {}, "check", {"type": None}):
        assert protocol.kind_of(untrusted, VerifierSays) is None


def test_no_party_writes_a_kind_as_a_literal():
    """Each kind's wire name appears once, in judge/shared/protocol.py; the parties name the enum member."""
    names = {kind.value for kind in KINDS} | {k.value for k in ErrorKind} | {e.value for e in RunnerEnd}
    names -= {"check", "done", "error", "memory", "time", "output", "signal", "exit", "start", "state", "call",
              "doctor", "keep", "cost"}  # also plain words of other meanings (a ProgressEvent "check", a wire
    #                                  "state", a playground finding "cost" ...)
    found = []
    for rel in PARTIES:
        tree = ast.parse((ROOT / rel).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in names:
                found.append(f"{rel}:{node.lineno}: {node.value!r}")
    assert not found, "\n".join(found)


def test_the_runner_answers_every_request_and_only_those(tmp_path):
    runner = Runner({"source": "", "entry_point": "f"}, out_fd=-1, scratch=tmp_path)
    assert set(runner.handlers) == set(Request)
    assert runner.answer({"op": "op_call"})["error"]["kind"] == ErrorKind.PROTOCOL
    assert runner.answer({"op": ["compile"]})["error"]["kind"] == ErrorKind.PROTOCOL


@pytest.mark.parametrize("end, crashed", [(RunnerEnd.SIGNAL, True), (RunnerEnd.EXIT, True),
                                          (RunnerEnd.CLOSED, True), (RunnerEnd.TIME, False),
                                          (RunnerEnd.SILENT, False), (RunnerEnd.START, False)])
def test_which_ends_are_the_learners_process_crashing(end, crashed):
    assert end.crashed is crashed


def _raised(exc):
    try:
        raise exc
    except BaseException as caught:  # noqa: BLE001 - a traceback for describe()
        return caught


@pytest.mark.parametrize("exc, kind", [
    (ValueError("bad"), ErrorKind.ERROR),
    (MemoryError(), ErrorKind.MEMORY),
    (RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 8 GB"), ErrorKind.MEMORY),
])
def test_one_classifier_for_both_sides(exc, kind):
    assert kind_of(exc) is kind
    assert describe(_raised(exc))["kind"] == kind.value


def test_dynamo_and_inductor_errors_are_compile_errors_and_breaks_graph_breaks():
    import torch._dynamo.exc
    import torch._inductor.exc

    assert kind_of(torch._inductor.exc.InductorError(ValueError("x"), "tb")) is ErrorKind.COMPILE_ERROR
    assert kind_of(torch._dynamo.exc.Unsupported("graph break")) is ErrorKind.GRAPH_BREAK


def test_the_line_reader_returns_each_line_as_it_arrives():
    splitter = Splitter()
    assert splitter.feed(b'{"a": 1}\n{"b"') == [b'{"a": 1}']
    assert splitter.feed(b': 2}\n\n') == [b'{"b": 2}', b""]
    assert splitter.rest() == b""
    read, write = os.pipe()
    os.write(write, b'{"job": 1}\n\n{"x": 2}\n{"tail": 3}')
    os.close(write)
    lines = Lines(read)
    assert lines.readline() == b'{"job": 1}'
    assert lines.buffer == b'\n{"x": 2}\n{"tail": 3}'  # what the verifier's client reads on from
    assert list(lines) == [b'{"x": 2}', b'{"tail": 3}']
    os.close(read)


@pytest.mark.parametrize("line", [b"not json", b"[1]", b"\xff", b'"text"'])
def test_a_line_that_is_not_an_object_is_refused_with_a_reason(line):
    with pytest.raises(ValueError):
        parse_line(line)
