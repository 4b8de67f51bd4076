"""Click options made from the one settings model, `web.settings.Settings`, as datasette makes its CLI from its
settings: an option's choices, bounds, help and default are its field's, never restated here.

An option left out passes None, and the settings model then reads `PRACTICE_<NAME>` or keeps its default, so the
environment variable is read in one place and a bad value names it (`cli.worker.settings_from`).
"""

from __future__ import annotations

import typing
from pathlib import Path

import click

from web.settings import Settings

# The option that sets each field, where it is not `--<field-name>` (so a bad value names what was typed).
FLAGS: dict[str, str] = {}


def setting_option(field: str, flag: str | None = None, **overrides):
    """`--<field>` (or `flag`) for the settings field `field`; `overrides` are click's own arguments, for what a
    command narrows (`practice worker --concurrency` needs at least 1)."""
    info = Settings.model_fields[field]
    flag = flag or f"--{field.replace('_', '-')}"
    FLAGS[field] = flag
    kind, options = _click_type(info)
    shown = _default_text(info)
    env = f"PRACTICE_{field.upper()}"
    help_text = f"{info.description} [{f'default: {shown}; ' if shown else ''}env var: {env}]"
    arguments = {"default": None, "help": help_text, **options, **({"type": kind} if kind else {})}
    return click.option(flag, field, **{**arguments, **overrides})


def _click_type(info) -> tuple[click.ParamType | None, dict]:
    annotation = info.annotation
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    if "enum" in extra:
        return click.Choice(list(extra["enum"])), {}
    if origin is typing.Literal:
        return click.Choice(list(args)), {}
    if origin is list and typing.get_origin(args[0]) is typing.Literal:
        return click.Choice(list(typing.get_args(args[0]))), {"multiple": True}
    if annotation is bool:
        return None, {"is_flag": True}
    if annotation is Path:
        return click.Path(path_type=Path), {}
    if annotation in (int, float):
        ge = next((m.ge for m in info.metadata if getattr(m, "ge", None) is not None), None)
        gt = next((m.gt for m in info.metadata if getattr(m, "gt", None) is not None), None)
        if annotation is int:
            return click.IntRange(min=ge if ge is not None else gt, min_open=gt is not None), {}
        return click.FloatRange(min=ge if ge is not None else gt, min_open=gt is not None), {}
    return None, {}


def _default_text(info) -> str:
    if info.default_factory is not None or info.default is None:
        return ""  # said by the description (a default that depends on the machine or on another setting)
    if isinstance(info.default, list):
        return ",".join(map(str, info.default))
    if isinstance(info.default, bool):
        return "on" if info.default else "off"
    return str(info.default)


# Options of the commands that open the database (db, admin, lti, regrade).
database_url_option = setting_option("database_url")
data_dir_option = setting_option("data_dir")
