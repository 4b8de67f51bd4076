"""How a submission is run: one interface (`Sandbox`), several backends chosen by name."""

from sandbox.backends import BACKENDS, get_sandbox, unavailable_reason
from sandbox.base import RunOutcome, Sandbox, SandboxError

__all__ = ["BACKENDS", "RunOutcome", "Sandbox", "SandboxError", "get_sandbox", "unavailable_reason"]
