import torch


@torch.library.custom_op("mylib::write_slot", mutates_args=("cache",))
def write_slot(cache: torch.Tensor, pos: torch.Tensor, k: torch.Tensor) -> None:
    # 在自定义算子里读 pos 的值：Dynamo 看不到这里的 int(pos)
    cache[:, int(pos)] = k[:, 0]


@write_slot.register_fake
def _(cache, pos, k):
    return None


def append_and_read(cache, pos, k):            # cache [B, Tmax, D]; pos: int64 tensor shape [1]; k [B, 1, D]
    write_slot(cache, pos, k)
    valid = torch.arange(cache.shape[1]) <= pos
    return (cache * valid[None, :, None]).sum(1)
