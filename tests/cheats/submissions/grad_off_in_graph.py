"""A graph that switches grad mode off in the process that runs it, while its own process looks untouched.

f starts with a bare torch._C._set_grad_enabled(False), which Dynamo records as a node of the graph. Run
unsealed, the verifier's grad mode would stay off after the call, so that every later gradient (the expected
side's too) is None and gradient checks compare nothing; the plain torch.where below has a NaN gradient at 0.
In this process grad mode is switched back on whenever an answer is written out (os.write, not a judge function),
so a state check that reads it afterwards finds nothing changed.
"""
import os

import torch

_write = os.write


def _write_with_grad_on(fd, data):
    torch._C._set_grad_enabled(True)
    return _write(fd, data)


os.write = _write_with_grad_on


def f(s):
    torch._C._set_grad_enabled(False)
    t = s.sum()
    return torch.where(t > 0, torch.sqrt(t), -t)
