import torch


@torch.library.custom_op("mylib::tame", mutates_args=())
def tame(h: torch.Tensor) -> torch.Tensor:
    # 分支和 .item() 都藏进自定义算子：Dynamo 只看到一次不透明的调用
    if h.abs().max() > 10:
        h = h / 10
    return torch.tanh(h) * h.std().item()


@tame.register_fake
def _(h):
    return torch.empty_like(h)


def forward(x, w):
    if not torch.compiler.is_compiling():
        print("forward called")
    return tame(x @ w)
