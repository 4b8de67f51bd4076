import torch


@torch.library.custom_op("mylib::double_if_positive", mutates_args=())
def double_if_positive(h: torch.Tensor) -> torch.Tensor:
    # 自定义算子对 Dynamo 不透明：里面的 .item() 和 if 不会打断图
    if h.sum().item() > 0:
        return h * 2
    return h.clone()


@double_if_positive.register_fake
def _(h):
    return torch.empty_like(h)


def step(x, w):
    h = x @ w
    h = double_if_positive(h)
    return torch.relu(h)
