"""The cost section as the front-ends show it: one line, a table's rows and a bar chart's bars (no torch here).

The CLI (`practice show ID --cost`, the line under a report) and the web page render these; they change how the
section looks, never what it says.
"""

from __future__ import annotations

from dataclasses import dataclass

from judge.reports.i18n import T
from judge.reports.report import CompiledCost, CostFigures, CostSection

WHO = {"learner": T("yours"), "reference": T("reference"), "starter": T("original")}


# How a byte count is shown, by every front-end: the CLI and the notebook here, the web page's cost.js from this
# table (web.i18n sends it to the page as `byte_units`). Each unit: (name, bytes in one, decimals); a count takes
# the largest unit not above it (the first below 1024) and is rounded half up in integer arithmetic, so Python and
# JavaScript (whose toFixed and Python's format round a binary fraction's ties differently) show the same text.
BYTE_UNITS: tuple[tuple[str, int, int], ...] = (("B", 1, 0), ("KiB", 1024, 1), ("MiB", 1024 ** 2, 1))


def human_bytes(n: int | float) -> str:
    """1536 -> '1.5 KiB', 4352 -> '4.3 KiB' (4.25 rounded half up), by BYTE_UNITS."""
    count = int(round(n))
    sign, count = ("-", -count) if count < 0 else ("", count)
    name, size, decimals = next((u for u in reversed(BYTE_UNITS) if count >= u[1]), BYTE_UNITS[0])
    scale = 10 ** decimals
    scaled = (2 * count * scale + size) // (2 * size)  # count / size, rounded half up at `decimals`
    whole, part = divmod(scaled, scale)
    return f"{sign}{whole}{'.' + str(part).zfill(decimals) if decimals else ''} {name}"


@dataclass
class Row:
    """One function's figures, formatted."""

    who: str
    label: T
    eager_ops: str = ""
    eager_bytes: str = ""
    kernels: str = ""
    compiled_bytes: str = ""
    saving: str = ""
    gpu_time: str = ""
    cpu_per_step: str = ""
    kernel_names: str = ""
    compiling: str = ""  # frames · graphs · guards · seconds ("—" where not counted here): compile_text
    unavailable: T | None = None


@dataclass
class Bar:
    label: T
    bytes: int
    text: str
    percent: float
    kind: str  # "eager" or "compiled"


def rows(section: CostSection) -> list[Row]:
    """A row per function, in the order learner, reference, starter."""
    made = []
    for figures in sorted(section.figures, key=lambda f: list(WHO).index(f.who)):
        row = Row(who=figures.who, label=WHO[figures.who])
        if figures.unavailable or figures.eager is None or figures.compiled is None:
            row.unavailable = figures.text_or_english("unavailable") if figures.unavailable else T("no figures")
            made.append(row)
            continue
        e, c = figures.eager, figures.compiled
        row.eager_ops, row.eager_bytes = str(e.ops), human_bytes(e.bytes)
        row.kernels = f"{len(c.kernels)} + {len(c.extern_calls)}" + (f" + {c.eager_ops_outside}"
                                                                      if c.eager_ops_outside else "")
        row.compiled_bytes = human_bytes(c.bytes)
        row.saving = f"{e.bytes / c.bytes:.1f}×" if c.bytes else ""
        row.kernel_names = ", ".join(c.kernels + c.extern_calls)
        row.compiling = compile_text(c)
        if figures.compiled_time is not None:
            t = figures.compiled_time
            eager_t = figures.eager_time
            row.gpu_time = (f"{eager_t.median_us:.1f} → " if eager_t else "") + f"{t.median_us:.1f} ± {t.spread_us:.1f}"
            if t.cpu_us_per_step is not None:
                row.cpu_per_step = (f"{eager_t.cpu_us_per_step:.1f} → " if eager_t and eager_t.cpu_us_per_step
                                    else "") + f"{t.cpu_us_per_step:.1f}"
        made.append(row)
    return made


def compile_text(c: CompiledCost) -> str:
    """What compiling cost, e.g. '2 · 1 · 25 · 0.2 s' (frames · graphs · guards · Dynamo's and Inductor's seconds);
    '—' for what was not counted here (the learner's frames and guards: Dynamo traced them in its own process)."""
    if c.compile is None:
        return ""
    k = c.compile
    seconds = (k.dynamo_s or 0.0) + k.inductor_s
    shown = ["—" if k.frames is None else str(k.frames), str(c.graphs), "—" if k.guards is None else str(k.guards)]
    return " · ".join(shown + [f"{seconds:.1f} s"])


def compile_note() -> T:
    """What the compiling column is, and who counted it."""
    return T("Compiling: frames Dynamo traced · graphs · guards · seconds, counted by the judge; your function was "
             "traced in your own process, so its frames and guards are not counted here (the compiler view shows "
             "its guards). Seconds are shown, never graded.")


def bars(section: CostSection) -> list[Bar]:
    """Bytes moved: the learner's graph eager, then each function compiled (the widest bar is 100%)."""
    found: list[tuple[T, int, str]] = []
    mine = section.of("learner")
    if mine and mine.eager and not mine.unavailable:
        found.append((T("yours, eager"), mine.eager.bytes, "eager"))
    for who, label in (("learner", T("yours, compiled")), ("reference", T("reference, compiled")),
                       ("starter", T("original, compiled"))):
        figures = section.of(who)
        if figures and figures.compiled and not figures.unavailable:
            found.append((label, figures.compiled.bytes, "compiled"))
    widest = max((b for _, b, _ in found), default=0) or 1
    return [Bar(label=label, bytes=b, text=human_bytes(b), percent=round(100.0 * b / widest, 1), kind=kind)
            for label, b, kind in found]


def _kernels(figures: CostFigures) -> int:
    return len(figures.compiled.kernels) + len(figures.compiled.extern_calls) + figures.compiled.eager_ops_outside


def summary(section: CostSection | None) -> T | None:
    """One line: the learner's eager ops and bytes, compiled kernels and bytes, and the reference's, e.g. "Cost:
    eager 7 ops, 18.4 KiB -> compiled 1 kernel, 4.3 KiB (4.3x less); reference 1 kernel, 4.3 KiB"."""
    if section is None:
        return None
    mine, ref = section.of("learner"), section.of("reference")
    ref_text = (T("reference {kernels} kernels, {bytes}", kernels=_kernels(ref), bytes=human_bytes(ref.compiled.bytes))
                if ref and ref.compiled else T.same(""))
    if mine is None or mine.unavailable or mine.compiled is None or mine.eager is None:
        return T("Cost (Inductor's estimate): yours has no figures; {reference}", reference=ref_text)
    ratio = mine.eager.bytes / mine.compiled.bytes if mine.compiled.bytes else 0.0
    return T("Cost (Inductor's estimate): eager {ops} ops, {eager} -> compiled {kernels} kernels, {compiled} "
             "({ratio}x less); {reference}", ops=mine.eager.ops, eager=human_bytes(mine.eager.bytes),
             kernels=_kernels(mine), compiled=human_bytes(mine.compiled.bytes), ratio=f"{ratio:.1f}",
             reference=ref_text)


def note(section: CostSection) -> T:
    """What the figures are, on which torch and which inputs."""
    return T("Compiled bytes are Inductor's estimate (torch._inductor.metrics), not a hardware counter; eager bytes "
             "count each ATen operator's inputs and outputs (views move nothing). Measured by the judge on torch "
             "{torch}, inputs {inputs}; kernels are generated kernels + extern calls (+ operators run eagerly after "
             "a graph break).", torch=section.torch_version, inputs=section.inputs)
