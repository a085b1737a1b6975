"""Key templates: literal text with ``{field}`` placeholders, compiled once into a formatter and
a parser. Nothing else formats or splits a key.

A placeholder matches up to the next literal text of its template (the last one takes the rest),
so a value may not contain that text: formatting such a value raises :class:`KeyValueError`
instead of writing a key that would parse back differently.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "Bounds",
    "KeyValueError",
    "Placeholder",
    "Template",
    "TemplateSyntaxError",
    "overlap",
]

Casing = Literal["none", "lower", "upper"]

# A value that sorts after every value a placeholder can hold (as UTF-8 bytes, as DynamoDB
# compares strings): the upper bound of a range over one placeholder.
HIGHEST = "\U0010ffff"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class TemplateSyntaxError(ValueError):
    """A template that cannot be compiled."""


class KeyValueError(ValueError):
    """A value that would break out of its place in a key."""


@dataclass(frozen=True, slots=True)
class Placeholder:
    name: str
    spec: str = ""  # a Python format spec, e.g. ``012d``
    stop: str = ""  # the literal text that ends it (or its run; '' for the last part)
    casing: Casing = "none"  # applied to the value placed into the key
    run: bool = False  # directly followed by another placeholder (no text between them)

    def render(self, value: Any) -> str:
        if value is None or value == "":
            raise KeyValueError(f"{self.name} must not be empty")
        if self.spec:
            try:
                text = format(int(value) if self.spec[-1:] in "dxXob" else value, self.spec)
            except (TypeError, ValueError) as exc:
                raise KeyValueError(f"{self.name}={value!r} does not fit {{{self.spec}}}") from exc
        else:
            text = value if isinstance(value, str) else str(value)
        if self.casing != "none":
            text = text.lower() if self.casing == "lower" else text.upper()
        if self.stop and self.stop in text:
            raise KeyValueError(f"{self.name} must not contain {self.stop!r}, got {text[:80]!r}")
        return text


@dataclass(frozen=True, slots=True)
class Template:
    """A compiled template. ``parts`` alternate literal strings and placeholders."""

    text: str
    parts: tuple[str | Placeholder, ...]

    @classmethod
    def compile(cls, text: str, casing: Casing = "none", runs: bool = False) -> Template:
        """``casing``: lower- or upper-case every value placed into the key (ElectroDB's keys),
        never the template's own text. ``runs``: placeholders may follow each other with no
        text between them (``account#{name}{id}``); such a key cannot be split, so its values
        are read elsewhere (their own attributes) and :meth:`parse` leaves them out."""
        parts: list[str | Placeholder] = []
        try:
            parsed = list(string.Formatter().parse(text))
        except ValueError as exc:
            raise TemplateSyntaxError(f"{text!r}: {exc}") from None
        for literal, name, spec, conversion in parsed:
            if literal:
                parts.append(literal)
            if name is None:
                continue
            if conversion or not _NAME.fullmatch(name):
                raise TemplateSyntaxError(
                    f"{text!r}: {{{name}}} is not a placeholder; write {{field}} or {{field:spec}}"
                )
            if parts and isinstance(parts[-1], Placeholder) and not runs:
                raise TemplateSyntaxError(
                    f"{text!r}: {{{parts[-1].name}}}{{{name}}} has no text between them, so the "
                    "key could not be split; put a separator such as # between placeholders"
                )
            parts.append(Placeholder(name, spec or "", casing=casing))
        for i, part in enumerate(parts):  # each placeholder stops at the literal after it
            if isinstance(part, Placeholder):  # (after its run: the placeholders that follow)
                following = next((p for p in parts[i + 1 :] if isinstance(p, str)), "")
                run = i + 1 < len(parts) and isinstance(parts[i + 1], Placeholder)
                parts[i] = Placeholder(part.name, part.spec, following, casing, run)
        names = [p.name for p in parts if isinstance(p, Placeholder)]
        if len(set(names)) != len(names):
            raise TemplateSyntaxError(f"{text!r}: a placeholder appears twice; name each once")
        return cls(text, tuple(parts))

    @property
    def placeholders(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parts if isinstance(p, Placeholder))

    @property
    def runs(self) -> frozenset[str]:
        """The placeholders with no text between them and a neighbour (``{name}{id}``): the
        key cannot be split into their values."""
        parts = self.parts
        return frozenset(
            p.name
            for i, p in enumerate(parts)
            if isinstance(p, Placeholder)
            and (p.run or (i > 0 and isinstance(parts[i - 1], Placeholder)))
        )

    @property
    def literal_prefix(self) -> str:
        """The text before the first placeholder (``ORDER#`` of ``ORDER#{id}``)."""
        return self.parts[0] if self.parts and isinstance(self.parts[0], str) else ""

    def format(self, values: Mapping[str, Any], partial: bool = False) -> str:
        """The key for ``values`` (every placeholder must have one; ``partial``: one without a
        value is written empty, as ElectroDB writes its index keys)."""
        out = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
            elif partial and values.get(part.name) in (None, ""):
                continue
            elif part.name not in values:
                raise KeyValueError(f"{self.text!r} needs a value for {part.name}")
            else:
                out.append(part.render(values[part.name]))
        return "".join(out)

    def prefix(self, values: Mapping[str, Any]) -> str:
        """The key prefix fixed by ``values``: the template up to its first placeholder without
        a value, ending at a literal boundary, so ``wh-1`` never matches ``wh-10``."""
        out = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
            elif values.get(part.name) is None:
                break
            else:
                out.append(part.render(values[part.name]))
                if not part.stop and not part.run:  # the last placeholder: the whole key
                    break
        return "".join(out)

    def bounds(
        self, values: Mapping[str, Any], low: Any, high: Any, exclusive: bool = False
    ) -> tuple[str | None, str | None, str, Bounds | None]:
        """A range over the first placeholder without a value in ``values``: sort-key bounds
        for the Query (``low``/``high`` strings, None where open), the prefix the given values
        fix, and the exact test of each key the range returns (None when the range is exact).

        DynamoDB compares whole keys, so a range over one placeholder followed by more text
        can only be a superset: ``GROUPSUB#prod1|…`` to ``GROUPSUB#prod1|\U0010ffff`` also holds
        ``GROUPSUB#prod10|…`` (``0`` sorts below ``|``). :class:`Bounds` then keeps exactly the
        keys whose placeholder value ``v`` has ``low <= v <= high`` (``exclusive``: ``<``),
        comparing values as DynamoDB compares strings (UTF-8 bytes, i.e. code points)."""
        prefix = self.prefix(values)
        target = next(
            (p for p in self.parts if isinstance(p, Placeholder) and values.get(p.name) is None),
            None,
        )
        if target is None or (low is None and high is None):
            return None, None, prefix, None
        lo = target.render(low) if low is not None else None
        hi = target.render(high) if high is not None else None
        check = Bounds(self, target.name, lo, hi, exclusive)
        if not target.stop:  # the last placeholder: the key ends with the value
            exact = not exclusive
            return (
                prefix + (lo or ""),
                prefix + hi if hi is not None else prefix + HIGHEST,
                prefix,
                None if exact else check,
            )
        upper = HIGHEST
        if hi is not None:  # the greatest key of any value v <= hi: v may be a prefix of hi
            upper = max(hi[:n] + target.stop for n in range(1, len(hi) + 1)) + HIGHEST
        return prefix + (lo or ""), prefix + upper, prefix, check

    def parse(self, key: str) -> dict[str, str] | None:
        """The placeholder values of ``key``, or None when it does not fit the template. The
        placeholders of a run (:attr:`runs`) are left out: the key says where the run ends,
        not where each of its values does."""
        values: dict[str, str] = {}
        position = 0
        run = 0  # placeholders of a run before this one
        for part in self.parts:
            if isinstance(part, str):
                if not key.startswith(part, position):
                    return None
                position += len(part)
                continue
            if part.run:
                run += 1
                continue
            end = key.find(part.stop, position) if part.stop else len(key)
            if end - position <= run:  # each value of the run holds a character at least
                return None
            if not run:
                values[part.name] = key[position:end]
            position, run = end, 0
        return values if position == len(key) else None

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Bounds:
    """The exact test of a range over one placeholder of a template (:meth:`Template.bounds`):
    a key is kept when it fits the template and its ``name`` value lies within the bounds
    (rendered as in keys; None is open)."""

    template: Template
    name: str
    low: str | None
    high: str | None
    exclusive: bool = False

    def holds(self, key: Any) -> bool:
        values = self.template.parse(key) if isinstance(key, str) else None
        if values is None:
            return False
        value = values[self.name]
        low, high = self.low, self.high
        if self.exclusive:
            return (low is None or value > low) and (high is None or value < high)
        return (low is None or value >= low) and (high is None or value <= high)


def overlap(a: Template, b: Template) -> bool:
    """Whether one key could match both templates (judged by their literal prefixes)."""
    pa, pb = a.literal_prefix, b.literal_prefix
    if not (pa.startswith(pb) or pb.startswith(pa)):
        return False
    if a.placeholders == () or b.placeholders == ():
        return a.text == b.text
    return True
