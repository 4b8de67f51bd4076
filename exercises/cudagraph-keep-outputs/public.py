"""Handed to `generate` as `step`: the serving engine's decode step, the operator `torch.ops.practice.decode_step`.

In the engine the step is `torch.compile(decode_step, mode="reduce-overhead")`: every call replays a CUDA graph
and returns a tensor that lives in that graph's memory pool, which the next replay overwrites. Here it is an
operator, one opaque call in the graph Dynamo captures from `generate`; the judge runs that graph with its own
CUDA-graph decode step (its own weights) in place of each call.
"""

import torch

D = 64
W = torch.randn(D, D, generator=torch.Generator().manual_seed(1234)) / D ** 0.5


@torch.library.custom_op("practice::decode_step", mutates_args=())
def decode_step(h: torch.Tensor) -> torch.Tensor:
    return torch.tanh(h @ W.to(device=h.device, dtype=h.dtype))


@decode_step.register_fake
def _(h):
    return torch.empty_like(h)


step = torch.ops.practice.decode_step.default
