"""The verifier: runs the hidden tests and decides every check. It never imports or runs learner code.

It holds the hidden tests, the reference and the starter. Tests reach the learner's code only through
`judge.remote` (requests relayed to the runner by the trusted side); graphs that come back are rebuilt from
the allowlist in `judge.shared.ir` and run here, on inputs the runner never saw. Results go to the result channel
as JSON lines stamped with the job's nonce: `collected`, one `check` per test, `runner_request`s, `done`.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from judge import remote
from judge.checks.failures import CheckFailure
from judge.compiler.logs import artifact_log
from judge.reports.i18n import T, in_code
from judge.shared import draw, phases, protocol, tiers
from judge.shared.protocol import Request, RunnerEnd, VerifierSays
from judge.verifier_side.compiler_view import ViewBuilder


class Channel:
    """JSON lines on the result descriptor, each stamped with the job's nonce."""

    def __init__(self, fd: int, nonce: str):
        self.fd, self.nonce = fd, nonce

    def send(self, kind: VerifierSays | str, **fields) -> None:
        """One message of `kind` (a `judge.shared.protocol.VerifierSays`) with the fields it declares."""
        message = protocol.message(VerifierSays(kind), **fields)
        data = memoryview((json.dumps({"nonce": self.nonce, **message}) + "\n").encode())
        while data:
            data = data[os.write(self.fd, data):]


def tamper_problems(answer: dict) -> list[T]:
    """The global changes a runner's `tamper` answer lists (untrusted data: at most five, each cut short); a change
    without its Chinese text is shown in both languages as the raw text in a code span."""
    changes, zh = answer.get("changes", []), answer.get("changes_zh")
    if not isinstance(changes, list):
        return [T("(malformed answer)")]
    zh = zh if isinstance(zh, list) and len(zh) == len(changes) else [None] * len(changes)
    return [T("{en}", zh="{said}", en=str(c)[:300], said=str(z)[:300]) if isinstance(z, str)
            else T("`{change}`", change=in_code(str(c)[:300])) for c, z in zip(changes[:5], zh)]


class TierSelection:
    """Keeps only a tier's hidden tests, in the order the tier lists them (judge/shared/tiers.py), before the collector
    reports the names (its hook runs last)."""

    def __init__(self, checks: list[str]):
        self.checks = checks

    def pytest_collection_modifyitems(self, session, config, items):
        kept = [items[i] for i in tiers.selected([item.name for item in items], self.checks)]
        items[:] = kept


def run(job, result_fd: int, scratch: Path, stdin) -> None:
    """Grade with the hidden tests; every outcome goes to the channel."""
    import pytest

    from judge.verifier_side.plugin import Collector, SilentTerminal

    phases.set_role("verifier")
    channel = Channel(result_fd, job.nonce)
    started = time.monotonic()
    client = remote.RunnerClient(channel.send, stdin.fd, deadline=started + job.runner_seconds + 5,
                                 buffered=stdin.buffer)
    view = ViewBuilder()
    # The contract's sizes and search are drawn with the grading too (its own stream, recorded as its seed).
    contract = {**job.contract, "seed": draw.stream(job.seed, f"contract {job.contract.get('seed', 0)}")} \
        if job.contract else None
    grading = remote.begin(client=client, op_namespaces=tuple(job.op_namespaces), contract=contract, view=view,
                           seed=job.seed, device=tiers.device_of(job.tier), reuse_compiled=job.reuse_compiled)
    hidden = scratch / "hidden"
    for rel, text in job.files.items():
        if not rel.startswith("tests/"):
            continue  # the reference and the starter stay in memory (grading.exercise.sources), never on disk
        path = hidden / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    grading.exercise.sources.update({"reference": job.files[job.reference], "starter": job.files[job.starter]})
    if job.public:
        grading.exercise.sources["exercise_public"] = job.public
    grading.exercise.entry_point = job.entry_point
    from judge.compiler.locations import register_learner_file

    register_learner_file(job.filename, job.filename)  # names in the runner's stacks are already this one
    (hidden / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    tests = list(job.tests)
    if job.contract:  # the generic contract checks run after the exercise's own tests
        (hidden / "tests").mkdir(parents=True, exist_ok=True)
        (hidden / "tests" / "test_zz_contract.py").write_text(
            "from judge.checks.contract_tests import *  # noqa: F401,F403\n", encoding="utf-8")
        tests.append("tests/test_zz_contract.py")

    state: dict = {}

    def after_collection(names: list[str]) -> bool:
        # Collection overlaps with the runner importing the learner's file; the checks wait for it.
        if not client.wait_loaded():
            state["not_loaded"] = True
            return False
        channel.send(VerifierSays.COLLECTED, names=names)
        return True

    def after_test() -> list[T]:
        if client.gone or not client.sent_since_reset:  # no request reached the runner: its code did not run
            return []
        try:
            answer = client.request(Request.TAMPER)
        except CheckFailure:
            return []
        return tamper_problems(answer)

    def send_check(result, runner_end: RunnerEnd | None) -> None:
        channel.send(VerifierSays.CHECK, check=result.model_dump(mode="json"),
                     **({"runner_end": runner_end.value} if runner_end else {}))

    collector = Collector(send_check, after_collection, after_test)
    plugins = [SilentTerminal(), collector] + ([TierSelection(job.tier_checks)] if job.tier else [])
    args = [str(hidden / t) for t in tests] + [
        "-c", str(hidden / "pytest.ini"), "--rootdir", str(hidden), "--confcutdir", str(hidden),
        "-s", "-p", "no:cacheprovider", "-p", "no:warnings", "-p", "no:xdist",
        "-p", "judge.verifier_side.fixtures", "-W", "ignore",
        # these two run gc.collect() five times at the end (~0.6 s with torch's heap): nothing here reads them
        "-p", "no:unraisableexception", "-p", "no:threadexception",
        # pytest's log capture attaches its handler to every non-propagating logger (torch has ~90) around each
        # phase of each check; no hidden test reads captured logs (the judge takes torch's logs itself:
        # judge/compiler/logs.py), and the other three are never used here
        "-p", "no:logging", "-p", "no:doctest", "-p", "no:pastebin", "-p", "no:stepwise",
    ] + (["--maxfail=1"] if job.stop_after_first_failure else [])
    sys.path.insert(0, str(hidden / "tests"))
    # the byte estimate on for every compile here, not only the cost section's: an FX-graph cache entry written
    # without it would give a later hit an estimate of 0 (judge/costs/measure.py)
    from judge.costs.measure import count_bytes_here

    count_bytes_here()
    with artifact_log("output_code") as generated:
        with phases.span("verifier.pytest"):
            exit_code = pytest.main(args, plugins=plugins)
        measured = job.cost and not job.stop_after_first_failure and not state.get("not_loaded")
        with phases.span("verifier.cost"):
            cost = _cost_section(job, grading, lambda: channel.send(VerifierSays.RUNNER_RELEASED)) if measured \
                else None
    for record in generated:
        message = record.getMessage()
        if message.startswith("Output code:"):
            view.add_kernel(message.removeprefix("Output code:").strip())
    if state.get("not_loaded"):
        channel.send(VerifierSays.RUNNER_NOT_LOADED)
        return
    if exit_code in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR):
        channel.send(VerifierSays.INTERNAL_ERROR,
                     message=f"pytest could not run the hidden tests (exit code {exit_code})")
        return
    sys.stdout.flush()
    sys.stderr.flush()
    if cost is not None:
        channel.send(VerifierSays.COST, section=cost.model_dump(mode="json"))
    compiler = view.view()
    if compiler is not None:
        channel.send(VerifierSays.COMPILER, view=compiler.model_dump(mode="json"))
    if grading.playground_findings is not None:  # a playground run's findings (judge/verifier_side/playground.py)
        channel.send(VerifierSays.DOCTOR, findings=grading.playground_findings)
    channel.send(VerifierSays.DONE)


def _cost_section(job, grading: remote.GradingContext, release_runner):
    """The report's cost section (judge/costs/section.py), or None where it cannot be made; never a verdict.
    `release_runner` ends the runner once the learner's graph is here: its wall clock does not pay for the rest."""
    from judge.costs.section import measure
    from judge.costs.spec import CostSpec

    if grading.runner.gone:
        return None
    try:
        reference = getattr(grading.exercise_module("reference"), job.entry_point)
        starter = getattr(grading.exercise_module("starter"), job.entry_point, None)
        return measure(CostSpec.model_validate(job.cost), reference, starter, release_runner=release_runner,
                       known=job.cost_known)
    except Exception as exc:  # noqa: BLE001 - the section is display only
        print(f"cost section not made: {type(exc).__name__}: {exc}", file=sys.stderr)
        return None
