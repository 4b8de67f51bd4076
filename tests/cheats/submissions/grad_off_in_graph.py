"""A graph that switches grad mode off in the process that runs it, and keeps its own process looking clean.

f starts with a bare torch._C._set_grad_enabled(False), which Dynamo records as a node of the graph. Run
unsealed, the verifier's grad mode would stay off after the call, so that every later gradient (the expected
side's too) is None and gradient checks compare nothing; the plain torch.where below has a NaN gradient at 0.
In this process, a profile hook turns grad mode back on whenever the judge's state check is about to read it.
"""
import sys

import torch

_READERS = {"process_globals", "changes", "changed"}


def _grad_back_on(frame, event, arg):
    if event == "call" and frame.f_code.co_name in _READERS:
        torch._C._set_grad_enabled(True)


sys.setprofile(_grad_back_on)


def f(s):
    torch._C._set_grad_enabled(False)
    t = s.sum()
    return torch.where(t > 0, torch.sqrt(t), -t)
