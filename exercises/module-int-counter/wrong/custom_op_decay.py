import torch


@torch.library.custom_op("mylib::decay", mutates_args=())
def decay(x: torch.Tensor, step: torch.Tensor) -> torch.Tensor:
    # 在自定义算子里读 step 的值：Dynamo 看不到这里的 int()，也就不会因为它重新编译
    n = int(step)
    return x * (0.9 ** n) + n


@decay.register_fake
def _(x, step):
    return torch.empty_like(x)


class EMADecay(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("step", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        self.step += 1
        return decay(x, self.step)
