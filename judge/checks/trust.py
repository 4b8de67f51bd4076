"""Label a hidden test whose pass rests on a fact only the learner's own process can report.

Most checks are decided here, on graphs the verifier rebuilt and ran on its own inputs. A few facts exist only in
the learner's process (what an eager call printed, a module's `state_dict`, what a fake implementation said while
tracing); a check that passes on such a fact cannot rule out forgery. It says so on the report, the page and in
the CLI (`CheckResult.learner_process`), and docs/security.md lists it with its reason:

    @rests_on_learner_process(T("the line an eager call printed: printing is the eager path's side effect",
                                zh="..."))
    def test_eager_call_still_prints(entry): ...
"""

from __future__ import annotations

from judge.reports.i18n import T

ATTRIBUTE = "learner_process"


def rests_on_learner_process(reason: T):
    """Mark a hidden test: `reason` (zh and en) names the fact the learner's process reports and why no graph or
    trusted observation can show it. The plugin copies it onto the test's CheckResult."""
    if not isinstance(reason, T):
        raise TypeError("rests_on_learner_process: give the reason as a T with zh and en")

    def mark(test):
        setattr(test, ATTRIBUTE, reason)
        return test

    return mark


def reason_of(test) -> T | None:
    """The reason a hidden test was marked with, or None."""
    reason = getattr(test, ATTRIBUTE, None)
    return reason if isinstance(reason, T) else None
