"""Flags generated from the one settings object: each field of :class:`~server.settings.Settings`
becomes one option whose name, type, default and ``--help`` line come from the field (its type,
default and ``description``) and its :class:`~server.settings.Flag` (spelling, metavar, choices,
group). A flag given wins over ``EDGEWISE_*``, which wins over the field's default: every
generated option defaults to ``None`` (not given), and :func:`settings_from` hands pydantic only
the flags given."""

from __future__ import annotations

import argparse
import textwrap
import types
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from server.settings import ENV_PREFIX, FieldInfo, Flag, Settings, flag_of, load_settings

__all__ = ["add_setting", "add_settings", "env_of", "help_of", "settings_from"]

Target = argparse.ArgumentParser | argparse._ArgumentGroup


def env_of(name: str) -> str:
    """The environment variable of the field ``name``."""
    return flag_of(name).env or f"{ENV_PREFIX}{name.upper()}"


def _kind(field: FieldInfo) -> Any:
    """The field's type without ``None`` (``str | None`` is ``str``)."""
    annotation = field.annotation
    if get_origin(annotation) in (Union, types.UnionType):
        [annotation] = [a for a in get_args(annotation) if a is not type(None)]
    return annotation


def _default(field: FieldInfo, flag: Flag) -> str | None:
    if flag.default is not None:
        return flag.default
    value = field.get_default(call_default_factory=False)
    if value is None or value == ():
        return None
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def help_of(name: str, description: str | None = None) -> str:
    """The ``--help`` line of the field ``name``: its description, then its variable and its
    default, e.g. ``port (env EDGEWISE_PORT; default 8000)``. A command that words a setting its
    own way passes ``description``, and the default is left to it."""
    field = Settings.model_fields[name]
    flag = flag_of(name)
    kind = _kind(field)
    env = env_of(name)
    if kind is bool:
        env += "=1|0"
    elif get_origin(kind) is tuple:
        env += ", comma-separated"
    default = _default(field, flag) if description is None else None
    text = description or field.description or ""
    return f"{text} (env {env}; default {default})" if default else f"{text} (env {env})"


def _converter(name: str, parse: Any) -> Any:
    """``parse`` for argparse: its ``ValueError`` message becomes the usage error."""

    def convert(value: str) -> Any:
        try:
            return parse(value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = name  # argparse names the type in its own messages
    return convert


def add_setting(target: Target, name: str, description: str | None = None) -> None:
    """The flag of the field ``name`` (see :func:`help_of` for ``description``)."""
    field = Settings.model_fields[name]
    flag = flag_of(name)
    if flag.env_only:
        raise ValueError(f"Settings.{name} is read from the environment only")
    kind = _kind(field)
    options: dict[str, Any] = {
        "dest": name,
        "default": None,  # not given: the environment or the field's default decides
        "help": help_of(name, description).replace("%", "%%"),
    }
    if kind is bool:
        negatable = field.default is not False
        options["action"] = argparse.BooleanOptionalAction if negatable else "store_true"
    elif get_origin(kind) is tuple:
        options["action"] = "append"
    elif flag.parse is not None:
        options["type"] = _converter(name, flag.parse)
    elif kind in (int, float, Path):
        options["type"] = kind
    elif kind is not str:
        raise TypeError(f"Settings.{name}: no flag for a {kind}; give it a Flag(parse=...)")
    if flag.metavar is not None:
        options["metavar"] = flag.metavar
    if flag.choices:
        options["choices"] = flag.choices
    target.add_argument(flag.spelling(name), **options)


def add_settings(parser: argparse.ArgumentParser) -> None:
    """Every setting's flag, in one argument group per :attr:`Flag.group` (groups in the order
    of their first field), and the settings read from the environment only in the epilog."""
    groups: dict[str, Target] = {}
    only: list[str] = []
    for name, field in Settings.model_fields.items():
        flag = flag_of(name)
        if flag.env_only:
            only.append(f"{env_of(name)}: {field.description} ({flag.env_only})")
            continue
        if flag.group not in groups:
            groups[flag.group] = parser.add_argument_group(flag.group)
        add_setting(groups[flag.group], name)
    lines = ["read from the environment only:"]
    for line in only:
        lines += textwrap.wrap(line, 96, initial_indent="  ", subsequent_indent="    ")
    parser.epilog = "\n".join(lines)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


def settings_from(args: argparse.Namespace) -> Settings:
    """The process's settings: the flags given, else ``EDGEWISE_*``, else the defaults; the
    settings' flags left out are filled in from them (``args.table`` after ``--table``)."""
    fields = Settings.model_fields
    given = {k: v for k, v in vars(args).items() if k in fields and v is not None}
    settings = load_settings(given, who=f"edgewise {args.command}")
    for name in fields:
        if getattr(args, name, False) is None:
            setattr(args, name, getattr(settings, name))
    return settings
