"""judge.checks.inplace: the caller's tensor must be updated in its own storage."""

import pytest
import torch

from judge.checks import WrongAnswer
from judge.checks.inplace import assert_updated_in_place


def check(update):
    cache = torch.zeros(2, 4)
    before, ptr = cache.clone(), cache.data_ptr()
    expected = before.clone()
    expected[:, 1] = 1.0
    update(cache)
    assert_updated_in_place(cache, data_ptr=ptr, before=before, expected=expected, case="step 1", what="cache")


def test_an_in_place_update_passes():
    check(lambda c: c[:, 1].fill_(1.0))


def test_an_update_to_a_copy_is_named():
    with pytest.raises(WrongAnswer, match="did not change at all"):
        check(lambda c: c.clone()[:, 1].fill_(1.0))


def test_new_storage_is_named():
    def rebind(c):
        c.data = torch.ones(2, 4)

    with pytest.raises(WrongAnswer, match="`data_ptr` changed"):
        check(rebind)


def test_a_wrong_value_is_a_mismatch():
    def wrong_column(c):
        c[:, 2].fill_(1.0)

    with pytest.raises(WrongAnswer, match="differs in 4 of 8"):
        check(wrong_column)
