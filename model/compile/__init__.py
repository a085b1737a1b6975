"""From a parsed file (:class:`model.spec.ModelSpec`) to the compiled :class:`model.types.Model`:
defaults applied, names resolved, templates compiled, and every cross-reference checked. Each
mistake is a :class:`Problem` naming its place in the file and what to write instead."""

from __future__ import annotations

from .base import Problem, camel, did_you_mean, lower_first, singular, upper_first
from .compiler import compile_model

__all__ = [
    "Problem",
    "camel",
    "compile_model",
    "did_you_mean",
    "lower_first",
    "singular",
    "upper_first",
]
