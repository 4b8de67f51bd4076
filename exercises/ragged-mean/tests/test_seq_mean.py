"""Hidden tests for ragged-mean: no data-dependent sizes in the graph, same means as the loop under dynamic=True.

The runner compiles seq_mean with dynamic=True on inputs of the test's shapes but other values (other x, other
lengths in the same range) and sends back the graph Dynamo captured; every numeric check runs that graph here
on the test's own x and lengths, its symbolic sizes bound from this side's inputs. Whether its sizes depend on
data is decided by tracing that graph here with symbolic sizes, not by the sizes the runner recorded.
"""

import torch

from judge.checks import assert_same_result, describe_tensor, pristine
from judge.checks.shapes import assert_no_unbacked_symbols
from judge.reports.i18n import T


def batch(b, t, d, lengths, dtype=torch.float32):
    return torch.randn(b, t, d, dtype=dtype), torch.tensor(lengths, dtype=torch.int64)


def case_of(x, lengths, note=None):
    if note is None:
        return T("{x}, lengths {lengths}", zh="{x}，lengths {lengths}", x=describe_tensor('x', x),
                 lengths=lengths.tolist())
    return T("{x}, lengths {lengths} ({note})", zh="{x}，lengths {lengths}（{note}）", x=describe_tensor('x', x),
             lengths=lengths.tolist(), note=note)


def compiled(entry):
    """seq_mean compiled in the runner (fullgraph, dynamic); each call runs the captured graph here."""
    return entry.compile(fullgraph=True, dynamic=True)


def test_no_data_dependent_sizes(entry):
    """Compiled with fullgraph=True and dynamic=True, the graph has no data-dependent (unbacked) sizes
    zh: 以 fullgraph=True 和 dynamic=True 编译，图里没有依赖数据的（unbacked）尺寸
    """
    args = batch(4, 6, 8, [6, 2, 3, 1])
    fn = entry.compile(fullgraph=True, dynamic=True,
                       what=T.same("`torch.compile(seq_mean, fullgraph=True, dynamic=True)`"))
    fn(*args)
    # The sizes the runner recorded name the learner's line; the graph is then traced here with symbolic sizes,
    # so that only its own operations decide the pass.
    assert_no_unbacked_symbols(fn.graph_modules, what=T("the graph of `seq_mean`", zh="`seq_mean` 的图"),
                               inputs=[fn.inputs_for(i, *args) for i in range(fn.frame_count)])


def test_same_as_loop(entry, starter):
    """Under dynamic=True the compiled seq_mean equals the loop for several shapes and lengths
    zh: dynamic=True 下，编译后的 seq_mean 在多种形状和长度上都与原来的循环相同
    """
    fn = compiled(entry)
    for args in [batch(4, 6, 8, [6, 2, 3, 1]), batch(3, 9, 5, [1, 9, 4]), batch(1, 1, 3, [1]),
                 batch(6, 17, 2, torch.randint(1, 18, (6,)).tolist())]:
        assert_same_result(fn, starter.seq_mean, *args, case=case_of(*args))


def test_empty_sequence(entry, starter):
    """A sequence of length 0 gives a row of NaN, as the original's empty mean does
    zh: 长度为 0 的序列得到一行 NaN，与原函数对空张量求 mean 的结果一样
    """
    fn = compiled(entry)
    for args in [batch(3, 5, 4, [5, 0, 2]), batch(2, 4, 3, [0, 0]), batch(2, 1, 3, [1, 0])]:
        assert_same_result(fn, starter.seq_mean, *args, case=case_of(*args, T("a length-0 sequence", zh="有长度为 0 的序列")))


def test_nan_in_sequence(entry, starter):
    """A NaN inside a sequence makes its row NaN, as the original's mean does; the other rows stay as they are
    zh: 序列内部的 NaN 让这一行的结果为 NaN，与原函数的 mean 一样；其他行不受影响
    """
    fn = compiled(entry)
    x, lengths = batch(3, 5, 4, [5, 3, 2])
    x[1, 1, 0] = float("nan")  # inside sequence 1 (length 3): its mean over column 0 is NaN
    expected = starter.seq_mean(pristine(x), pristine(lengths))
    assert expected[1, 0].isnan() and not expected[0].isnan().any(), "test inputs are broken"
    assert_same_result(fn, starter.seq_mean, x, lengths,
                       case=case_of(x, lengths, T("`x[1, 1, 0]` is NaN, inside sequence 1",
                                                  zh="`x[1, 1, 0]` 是 NaN，位于第 1 个序列内部")))

def test_padding_takes_no_part(entry, starter):
    """NaN and ±inf in the padding (past each length) change no result, as the original's slice leaves them out
    zh: 填充位置（长度之后）的 NaN 和 ±inf 不改变任何结果，与原函数切片时不读它们一样
    """
    fn = compiled(entry)
    for dtype in (torch.float32, torch.float64, torch.bfloat16):
        x, lengths = batch(3, 5, 4, [5, 3, 2], dtype)
        x[1, 3:, 0] = float("nan")
        x[2, 2:, 1] = float("inf")
        x[2, 4, 2] = -float("inf")
        expected = starter.seq_mean(pristine(x), pristine(lengths))
        assert expected.isfinite().all(), "test inputs are broken"
        assert_same_result(fn, starter.seq_mean, x, lengths,
                           case=case_of(x, lengths, T("NaN, inf and -inf in the padding of sequences 1 and 2",
                                                      zh="第 1、2 个序列的填充里有 NaN、inf 和 -inf")))


def test_float64(entry, starter):
    """float64 inputs give float64 means equal to the original
    zh: float64 输入得到与原函数相同的 float64 均值
    """
    fn = compiled(entry)
    for args in [batch(4, 7, 3, [7, 0, 1, 4], torch.float64), batch(2, 3, 6, [3, 2], torch.float64)]:
        assert_same_result(fn, starter.seq_mean, *args, case=case_of(*args))
