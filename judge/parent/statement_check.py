"""The statement's contract section against the exercise's `[contract]` (`practice prove` runs it).

A learner reads the promise in the statement ("## 约定" / "## Contract"); the hidden contract checks test the
declaration in exercise.toml. The two must agree, in both languages: every input the declaration names is
named in the section, a shape the section gives an input (`x` ... `[B, K]`) is the declared one, and the
dtypes the section names are exactly the declared ones.
"""

from __future__ import annotations

import re

from judge.parent.exercise import Exercise

HEADINGS = {"zh": "约定", "en": "Contract"}
DTYPE_NAMES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "bool")
# "`x` 形状 `[B, K]`", "`x` has shape `[B, K]`": the shape a section gives an input
SHAPE_NEAR = r"`{name}`\s*(?:形状|has shape|of shape)\s*`\[([^\]`]*)\]`"


def contract_section(text: str, heading: str) -> str | None:
    """The text under `## <heading>` up to the next `## ` heading, or None if there is no such section."""
    found = re.search(rf"^## {re.escape(heading)}\s*$(.*?)(?=^## |\Z)", text, re.M | re.S)
    return found.group(1) if found else None


def contract_problems(exercise: Exercise) -> list[str]:
    """Where the statements' contract sections and `[contract]` disagree (empty when they agree)."""
    contract = exercise.contract
    if contract is None:
        return []
    problems = []
    for lang, heading in HEADINGS.items():
        where = f"{exercise.statement if lang == 'zh' else exercise.statement_en} (## {heading})"
        section = contract_section(exercise.statement_text(lang), heading)
        if section is None:
            problems.append(f"{where}: no such section, but exercise.toml declares [contract]")
            continue
        for item in contract.inputs:
            if f"`{item.name}`" not in section:
                problems.append(f"{where}: does not name the input `{item.name}`")
            for given in re.findall(SHAPE_NEAR.format(name=re.escape(item.name)), section):
                declared = [str(d) for d in item.shape]
                if [d.strip() for d in given.split(",") if d.strip()] != declared:
                    problems.append(f"{where}: gives `{item.name}` the shape [{given}], [contract] declares "
                                    f"[{', '.join(declared)}]")
        named = {d for d in DTYPE_NAMES if re.search(rf"(?<![\w.]){d}(?!\w)", section)}
        floating = set(contract.dtypes)
        integer = {item.dtype for item in contract.inputs if item.dtype}
        if floating - named:
            problems.append(f"{where}: does not name the dtypes {sorted(floating - named)} that [contract] allows")
        if named - floating - integer:
            problems.append(f"{where}: names dtypes {sorted(named - floating - integer)} that [contract] does not "
                            "allow")
    return problems
