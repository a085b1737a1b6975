"""What the model's compiler and the engine share, with nothing of the model file's parser
(pydantic, YAML) imported: the shipped models and where a model's file is, the error of an
invalid model, names and suggestions. A process serving a model compiled ahead of time
(``edgewise build``) imports this and never :mod:`model.load`."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

__all__ = [
    "SHIPPED",
    "ModelError",
    "camel",
    "did_you_mean",
    "lower_first",
    "model_path",
    "singular",
    "upper_first",
]

SHIPPED = ("demo", "orders", "order-entry")


class ModelError(Exception):
    """An invalid model; ``lines`` holds one formatted line per mistake."""

    def __init__(self, source: str, lines: list[str]) -> None:
        super().__init__(f"{source}: {len(lines)} problem(s)\n" + "\n".join(lines))
        self.source = source
        self.lines = lines


def model_path(name_or_path: str) -> Path:
    """A shipped model's file (``demo``, ``orders``, ``order-entry``) or a path."""
    if name_or_path in SHIPPED:
        package = resources.files("models") / name_or_path.replace("-", "_") / "model.yaml"
        return Path(str(package))
    path = Path(name_or_path)
    if not path.is_file():
        shipped = ", ".join(SHIPPED)
        raise ModelError(name_or_path, [f"no such model file; pass a path or one of {shipped}"])
    return path


def lower_first(name: str) -> str:
    return name[:1].lower() + name[1:]


def upper_first(name: str) -> str:
    return name[:1].upper() + name[1:]


def camel(label: str) -> str:
    """``WORKS_AT`` -> ``WorksAt``."""
    return "".join(part.capitalize() for part in label.lower().split("_") if part)


def singular(name: str) -> str:
    if name.endswith("ies"):
        return name[:-3] + "y"
    if name.endswith("s") and not name.endswith("ss"):
        return name[:-1]
    return name


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(choices), n=1)
    if close:
        return f"did you mean {close[0]!r}?"
    known = ", ".join(sorted(choices)) or "none"
    return f"use one of: {known}"
