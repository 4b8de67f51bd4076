"""The reference's and the starter's cost figures, kept by the grading side between gradings of one exercise.

Those two functions are the exercise's own code: their figures depend only on the exercise's version (its
fingerprint), the `[cost]` inputs and the torch the verifier runs. The first grading's verifier measures them; its
section (a verifier's message, never the runner's) fills this memo, and every later job of the same version
carries them (`VerifierJob.cost_known`), so a verifier compiles only the learner's graph, and that one the hidden
tests have usually compiled already (judge.costs.measure.recording_inductor). A verifier on another torch ignores them.
CPU sections only: a GPU time is measured afresh for every report.
"""

from __future__ import annotations

import json
import threading

from judge.reports.report import CostSection

TRUSTED = ("reference", "starter")
_KNOWN: dict[tuple[str, str], dict] = {}
_LOCK = threading.Lock()


def _key(exercise, spec: dict) -> tuple[str, str]:
    from judge.parent.fingerprint import exercise_fingerprint

    return exercise_fingerprint(exercise), json.dumps(spec, sort_keys=True)


def known(exercise, spec: dict | None) -> dict | None:
    """What an earlier verifier measured of `exercise`'s reference and starter on `spec`: {"torch_version",
    "figures": [CostFigures as JSON]}, or None."""
    if not spec or spec.get("device", "cpu") != "cpu":
        return None
    with _LOCK:
        return _KNOWN.get(_key(exercise, spec))


def remember(exercise, spec: dict | None, section: CostSection | None) -> None:
    """Keep the reference's and starter's measured figures of a verifier's `section` (those it could measure)."""
    if not spec or section is None or spec.get("device", "cpu") != "cpu":
        return
    figures = [f.model_dump(mode="json") for f in section.figures
               if f.who in TRUSTED and not f.unavailable and f.eager is not None and f.compiled is not None]
    if figures:
        with _LOCK:
            _KNOWN[_key(exercise, spec)] = {"torch_version": section.torch_version, "figures": figures}


def forget() -> None:
    """Empty the memo (tests, and a course reloaded in place)."""
    with _LOCK:
        _KNOWN.clear()
