"""A model compiled ahead of time (``edgewise build --model M --output DIR``), read back by a cold
process (``EDGEWISE_COMPILED=DIR``) instead of parsing, validating and compiling the file.

``DIR`` holds ``manifest.json`` and one ``<model>.pickle`` a model: the compiled
:class:`model.types.Model` (frozen values) as :mod:`pickle` writes it. Pickle was chosen by the
figure (docs/performance.md, "Cold start"): reading it takes about a millisecond, where the file
itself (YAML, validated by pydantic, then compiled) takes a tenth of a second and imports YAML
and pydantic first; JSON of the same file still needs pydantic and the compiler. A pickle runs
code as it loads: ``DIR`` is part of the deployment, as trusted as its code.

The manifest names each model by its ``--model`` value with the SHA-256 of its file, and the
engine that compiled it (the SHA-256 of this package's source: the compiler and the classes of
the values). A build whose model file changed since, or made by another engine, is refused with
a message saying what to run; nothing falls back to compiling silently."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import pickle
from functools import cache
from pathlib import Path
from typing import Any

from .common import ModelError, model_path
from .types import Model

__all__ = ["MANIFEST", "engine_fingerprint", "read", "write"]

MANIFEST = "manifest.json"
FORMAT = 1


@cache
def engine_fingerprint() -> str:
    """SHA-256 of the ``model`` package's source files (the compiler, and the classes the
    pickle names)."""
    root = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    paths = []
    for folder, folders, files in os.walk(root):
        folders[:] = [f for f in folders if f != "__pycache__"]
        paths += [os.path.join(folder, f) for f in files if f.endswith(".py")]
    for path in sorted(paths):
        digest.update(os.path.relpath(path, root).replace(os.sep, "/").encode() + b"\0")
        with open(path, "rb") as source:
            digest.update(source.read() + b"\0")
    return digest.hexdigest()


def _file_hash(model: str) -> str:
    return hashlib.sha256(model_path(model).read_bytes()).hexdigest()


def _file_name(model: str) -> str:
    """``demo`` -> ``demo.pickle``; a path -> its stem and a short hash of the path itself."""
    stem = Path(model).stem if model.endswith((".yaml", ".yml")) else model
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in stem) or "model"
    if safe != model:
        safe += "-" + hashlib.sha256(model.encode()).hexdigest()[:8]
    return safe + ".pickle"


def _manifest(directory: Path) -> dict[str, Any] | None:
    try:
        found = json.loads((directory / MANIFEST).read_text())
    except FileNotFoundError:
        return None
    except ValueError:
        again = f"{MANIFEST} is not JSON; run `edgewise build` again"
        raise ModelError(str(directory), [again]) from None
    return found if isinstance(found, dict) else None


def write(model: str, compiled: Model, directory: Path) -> Path:
    """Write ``compiled`` (the model that ``model`` names, checked) into ``directory``, beside
    the builds of other models made by this engine; returns the pickle's path."""
    directory.mkdir(parents=True, exist_ok=True)
    manifest = _manifest(directory) or {}
    engine = engine_fingerprint()
    if manifest.get("format") != FORMAT or manifest.get("engine") != engine:
        manifest = {"format": FORMAT, "engine": engine, "models": {}}
    name = _file_name(model)
    target = directory / name
    partial = target.with_suffix(".partial")
    partial.write_bytes(pickle.dumps(compiled, protocol=pickle.HIGHEST_PROTOCOL))
    partial.replace(target)
    manifest["models"][model] = {
        "file": name,
        "sha256": _file_hash(model),
        "built": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return target


def read(directory: Path, model: str) -> Model:
    """The compiled model ``model`` from ``directory``; :class:`model.ModelError` with one line
    saying what to run when the build is missing, stale (the model file changed since) or was
    made by another engine."""
    again = f"run `edgewise build --model {model} --output {directory}` again"
    manifest = _manifest(directory)
    if manifest is None:
        raise ModelError(
            str(directory),
            [f"EDGEWISE_COMPILED={directory}: no {MANIFEST} there; {again.replace(' again', '')}"],
        )
    if manifest.get("format") != FORMAT or manifest.get("engine") != engine_fingerprint():
        raise ModelError(
            str(directory),
            [
                f"EDGEWISE_COMPILED={directory} was built by another version of Edgewise (its "
                f"model compiler differs from this one's); {again}"
            ],
        )
    entry = manifest.get("models", {}).get(model)
    if entry is None:
        held = ", ".join(sorted(manifest.get("models", {}))) or "none"
        raise ModelError(
            str(directory),
            [
                f"EDGEWISE_COMPILED={directory} holds no build of the model {model} (it holds: "
                f"{held}); run `edgewise build --model {model} --output {directory}`, or unset "
                "EDGEWISE_COMPILED"
            ],
        )
    if _file_hash(model) != entry.get("sha256"):
        raise ModelError(
            str(directory),
            [
                f"EDGEWISE_COMPILED={directory}: the model {model} ({model_path(model)}) has "
                f"changed since it was built ({entry.get('built', 'at an unknown time')}); "
                f"{again}"
            ],
        )
    loaded = pickle.loads((directory / entry["file"]).read_bytes())
    if not isinstance(loaded, Model):
        raise ModelError(str(directory), [f"{entry['file']} holds no model; {again}"])
    return loaded
