import math

import torch


def fast_gelu_ext(x):                  # pretend this is an unregistered C/pybind kernel
    vals = [0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.detach().flatten().tolist()]
    return torch.tensor(vals, dtype=x.dtype).view(x.shape)


# 注册成自定义算子：Dynamo 把它当成图里一个不透明的节点，不再追踪进去  # en: registered as a custom operator: Dynamo treats it as one opaque node of the graph and traces no further into it
@torch.library.custom_op("ext::fast_gelu", mutates_args=())
def fast_gelu(x: torch.Tensor) -> torch.Tensor:
    return fast_gelu_ext(x)


@fast_gelu.register_fake
def _(x):
    # 编译时只需要知道输出的形状、dtype 和设备，不真正计算  # en: while compiling, only the output's shape, dtype and device are needed: nothing is really computed
    return torch.empty_like(x)


def block(x, w):
    return fast_gelu(x @ w) + 1.0
