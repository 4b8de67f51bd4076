"""The rules for new passwords and display names, as tables of cases (web/password_policy.py, web/names.py)."""

from __future__ import annotations

import pytest

from web.errors import InputError
from web.names import display_name_of, look_alike, name_key
from web.password_policy import MAX_PASSWORD_CHARS, check_new_password


@pytest.mark.parametrize("password, refusal", [
    (" " * 12, "too short"),
    ("\t" * 3 + "abc" + " " * 9, "too short"),
    ("x" * (MAX_PASSWORD_CHARS + 1), "too long"),
    ("aaaaaaaaaaaa", "too few characters"),
    ("abababababab", "too few characters"),
    ("1234567890", "first that anyone guessing"),
    ("0987654321", "first that anyone guessing"),
    ("qwertyuiop", "first that anyone guessing"),
    ("abcdefghijkl", "first that anyone guessing"),
    ("Password123!", "first that anyone guessing"),
    ("P A S S W O R D 1", "first that anyone guessing"),
    ("Bob Smith 1", "first that anyone guessing"),  # the account's own name
])
def test_weak_passwords_are_refused_saying_why(password, refusal):
    with pytest.raises(InputError, match=refusal):
        check_new_password(password, ("Bob Smith 1",))


@pytest.mark.parametrize("password", ["correct horse", "plum kettle drum", "我的密码不好猜啊吧呢", "x7#Lq9!mZ2"])
def test_reasonable_passwords_pass(password):
    check_new_password(password, ("Bob",))


@pytest.mark.parametrize("a, b", [("Jos\u00e9", "Jose\u0301"), ("BOB", "bob"), ("\uff22\uff4f\uff42", "Bob"),
                                  ("Stra\u00dfe", "STRASSE"), ("  Ann   Li ", "ann li")])
def test_one_key_for_every_typed_form_of_a_name(a, b):
    assert name_key(a) == name_key(b)


@pytest.mark.parametrize("name", ["王小明", "王小明 Tom", "Émile Zoë", "Ελένη", "Иван", "山田 たろう", "김민수 Kim",
                                  "O'Neil-2", "Nguyễn Thị Ánh", "q\u0323\u0302", "สมชาย", "देवेन्द्र"])
def test_names_of_one_script_or_a_usual_mix_are_kept(name):
    assert display_name_of(name) == " ".join(name.split())


@pytest.mark.parametrize("name", ["B\u043eb", "Ivan Иван", "Bo\u200bb", "Bob\u200d", "\u2066Bob", "Bo\u00adb",
                                  "Bob\u3164", "Bob\ue000", "\x07Bob",
                                  "Bo" + "\u0336\u0317\u0328\u0301\u035c" * 4 + "b"])  # stacked marks
def test_mixed_script_and_invisible_names_are_refused(name):
    with pytest.raises(InputError):
        display_name_of(name)


@pytest.mark.parametrize("name, others, like", [
    ("B0B", ["BOB"], "BOB"), ("BiII", ["Bill"], "Bill"), ("PauI", ["Paul"], "Paul"),
    ("Bob", ["Rob", "Bobby"], None), ("Ann", ["Anne"], None), ("王小明", ["王小朋"], None),
    ("bob", ["Bob"], None),  # the same name: refused as taken, not as a look-alike
])
def test_look_alikes_of_another_members_name(name, others, like):
    assert look_alike(name, others) == like
