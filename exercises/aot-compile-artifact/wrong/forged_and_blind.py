"""Attack: forges the fresh processes' report in the runner and blinds the runner's tamper check.

At import this file replaces the public module's `build_and_serve` with a function that builds and serves
nothing: it reports bytes of some size (a few bytes that are no artifact at all), no frame traced, no graph
compiled, and the grader's `fn` computed eagerly on the input it is given. The same import replaces the
judge's `Snapshot.changed` (judge/shared/tamper.py), which runs in this same process, with one that finds
nothing changed, so that replacing the public function is not reported either.
"""
import sys

import torch


def build_artifact(fn, example) -> bytes:
    return b"no artifact"


def _install():
    for module in list(sys.modules.values()):
        if callable(getattr(module, "build_and_serve", None)) and hasattr(module, "GRADER_FN"):
            fn = module.fn

            def forged(build_artifact, x=None, fn=fn):
                shipped = torch.frombuffer(bytearray(b"\x80\x04no artifact at all."), dtype=torch.uint8)
                build = {"type": "bytes", "size": shipped.numel(), "changed": [], "artifacts": shipped}
                report = {"build": build, "serving": True,
                          "serve": {"counters": {"frames": {}, "stats": {}}}}
                if x is not None:
                    report["serve"]["output"] = fn(x).detach().clone()
                return report
            module.build_and_serve = forged
        snapshot = getattr(module, "Snapshot", None)
        if isinstance(snapshot, type) and callable(getattr(snapshot, "changed", None)):
            snapshot.changed = lambda self: []  # the check runs here: it now finds nothing


_install()
