"""Handed to the runner for custom-op-gelu: torch.library.opcheck on the learner's own `ext` operator.

The learner's code does not need anything from here. The hidden tests call `opcheck` with the name of the
`ext` op found in the captured graph and a sample input; its report can only make a check fail (every
number the judge accepts is computed by the judge, with its own implementation of the op).
"""

import torch


def opcheck(name: str, overload: str, *args) -> dict[str, str]:
    """torch.library.opcheck(torch.ops.ext.<name>.<overload>, args): each sub-test's outcome as text."""
    try:
        op = getattr(getattr(torch.ops.ext, name), overload)
        results = torch.library.opcheck(op, args, raise_exception=False)
    except Exception as exc:  # noqa: BLE001 - opcheck itself can fail on a broken registration
        first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
        return {"opcheck": f"{type(exc).__name__}: {first}"}
    return {str(test): "SUCCESS" if outcome == "SUCCESS" else (str(outcome).strip() or type(outcome).__name__)[:2000]
            for test, outcome in results.items()}
