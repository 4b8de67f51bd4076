"""judge.compiler.logs: artifact records collected, and the structured trace log left without a handler."""

import torch

from judge.compiler.logs import artifact_log


def test_an_artifact_is_collected_and_the_trace_log_stays_silent():
    from torch._logging._internal import LazyTraceHandler, trace_log

    def f(x):
        return x * 2

    torch._dynamo.reset()
    with artifact_log("recompiles") as records:
        compiled = torch.compile(f, backend="eager")
        compiled(torch.ones(2, dtype=torch.float32))
        compiled(torch.ones(2, dtype=torch.float64))  # another dtype: one recompile
        # With a handler on TORCH_TRACE's log, every compile event would build a JSON record no artifact reads.
        # (pytest's own log capture may sit there too, depending on the tests before this one: not TORCH_TRACE's)
        assert not [h for h in trace_log.handlers if isinstance(h, LazyTraceHandler)]
    torch._dynamo.reset()
    assert any("dtype" in r.getMessage() for r in records)


def test_artifacts_turned_on_together_are_each_seen_by_their_loggers_at_once():
    # set_logs is run with the loggers' level caches cleared once at its end (judge.compiler.logs): a cache left
    # stale would keep answering "not enabled" for an artifact just turned on.
    import logging

    from judge.compiler.logs import SHARED_ARTIFACTS, enable_artifacts_before_fork

    guards = torch._logging.getArtifactLogger("torch._dynamo.guards", "guards")
    recompiles = torch._logging.getArtifactLogger("torch._dynamo.guards", "recompiles")
    guards.isEnabledFor(logging.DEBUG)  # fill the cache before the change
    enable_artifacts_before_fork()
    assert recompiles.isEnabledFor(logging.DEBUG)
    state = torch._logging._internal.log_state
    assert all(state.is_artifact_enabled(a) for a in SHARED_ARTIFACTS)
    with artifact_log("guards"):
        assert guards.isEnabledFor(logging.DEBUG)
    assert "_clear_cache" not in vars(logging.Logger.manager)  # the method is the class's again
