"""How a submission is run: one interface (`Sandbox`), several backends chosen by name."""

from sandbox.base import RunOutcome, Sandbox, SandboxError, get_sandbox

__all__ = ["RunOutcome", "Sandbox", "SandboxError", "get_sandbox"]
