import torch
import triton
import triton.language as tl


@triton.jit
def _add_rmsnorm_kernel(x_ptr, r_ptr, w_ptr, out_ptr, h_ptr, D: tl.constexpr, BLOCK: tl.constexpr, eps):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < D
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(r_ptr + cols, mask=mask, other=0.0).to(tl.float32)      # forgets the row offset: row 0's residual
    h = x + r
    tl.store(h_ptr + row * D + cols, h, mask=mask)
    inv = tl.rsqrt(tl.sum(h * h, axis=0) / D + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * D + cols, h * inv * w, mask=mask)


def add_rmsnorm(x, residual, w, eps=1e-6):
    # one hand-written Triton kernel that writes both results
    out, h = torch.empty_like(x), torch.empty_like(x)
    rows, d = x.shape
    _add_rmsnorm_kernel[(rows,)](x, residual, w, out, h, d, triton.next_power_of_2(d), eps)
    return out, h
