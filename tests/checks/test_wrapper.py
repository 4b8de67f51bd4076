"""judge.checks.wrapper: the calls Inductor's generated call() makes outside its own kernels."""

import pytest
import torch

from judge.checks import WrongAnswer, inductor_code
from judge.checks.wrapper import assert_no_opaque_calls, call_bodies, opaque_calls

GENERATED = '''
class Runner:
    def __init__(self, partitions):
        self.partitions = partitions

    def call(self, args):
        arg0_1, arg1_1 = args
        args.clear()
        assert_size_stride(arg0_1, (8, 64), (64, 1), 'input')
        # Topologically Sorted Source Nodes: [rms], Original ATen: [aten.mul, aten.mm]
        buf0 = torch.ops.ext.rms.default(arg0_1, arg1_1)
        assert_size_stride(buf0, (8, 64), (64, 1), 'torch.ops.ext.rms.default')
        buf1 = empty_strided_cpu((8, 8), (8, 1), torch.float32)
        extern_kernels.mm(buf0, arg1_1, out=buf1)
        buf2 = torch.ops.aten.sort.stable(buf1, stable=False, dim=1, descending=False)
        cpp_fused_silu_0(buf1)
        return (buf1, )

def get_args():
    return [torch.ops.not_in_call.default(1)]
'''

FUSED_ONLY = '''
    def call(self, args):
        arg0_1, = args
        buf0 = empty_strided_cpu((8, 64), (64, 1), torch.float32)
        cpp_fused_add_mean_mul_pow_rsqrt_silu_0(arg0_1, buf0)
        return (buf0, )
'''


def test_call_body_is_the_call_function_only_without_comments():
    (body,) = call_bodies([GENERATED])
    assert "cpp_fused_silu_0(buf1)" in body
    assert "Topologically" not in body and "not_in_call" not in body and "partitions" not in body


def test_opaque_calls_lists_extern_fallback_and_custom_ops_in_order():
    assert opaque_calls([GENERATED]) == ["torch.ops.ext.rms.default", "extern_kernels.mm", "torch.ops.aten.sort.stable"]


def test_generated_kernels_and_plumbing_are_not_opaque():
    assert opaque_calls([FUSED_ONLY]) == []
    assert_no_opaque_calls([FUSED_ONLY])


def test_assert_names_the_opaque_calls():
    with pytest.raises(WrongAnswer, match=r"extern_kernels\.mm, torch\.ops\.aten\.sort\.stable, torch\.ops\.ext"):
        assert_no_opaque_calls([GENERATED])


@pytest.mark.slow
def test_a_real_custom_op_is_an_opaque_call():
    @torch.library.custom_op("wrappertest::scale", mutates_args=())
    def scale(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    scale.register_fake(lambda x: torch.empty_like(x))
    torch._dynamo.reset()
    _, codes = inductor_code(lambda x: torch.relu(scale(x)) + 1, torch.randn(4, 8), fullgraph=True)
    assert opaque_calls(codes) == ["torch.ops.wrappertest.scale.default"]
