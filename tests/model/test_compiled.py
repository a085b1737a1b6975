"""``edgewise build`` and ``EDGEWISE_COMPILED`` (model/compiled.py): the model read back is the
model the file compiles to; a build whose file changed since, of another model, or made by
another engine is refused with one line saying what to run, by the engine and at ``serve``'s
start."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graph.dynamo.embedded import free_port
from model import ModelError
from model.common import model_path
from model.compiled import MANIFEST, read, write
from model.load import load_model
from server.engine import engine_for

ROOT = Path(__file__).resolve().parents[2]


def edgewise(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def own_model(tmp_path: Path) -> Path:
    """A model file of one's own: the shipped order-entry model, copied."""
    copy = tmp_path / "shop.yaml"
    shutil.copy(model_path("order-entry"), copy)
    return copy


def test_the_build_reads_back_the_model_its_file_compiles_to(tmp_path: Path) -> None:
    built = edgewise("build", "--model", "demo", "--output", str(tmp_path / "out"))
    assert built.returncode == 0, built.stderr
    assert "EDGEWISE_COMPILED=" in built.stdout
    assert read(tmp_path / "out", "demo") == load_model("demo")
    engine = engine_for("demo", tmp_path / "out")
    sdl = engine.schema().as_str()
    assert sdl == engine_for("demo").schema().as_str()


def test_one_directory_holds_several_models(tmp_path: Path, own_model: Path) -> None:
    write("demo", load_model("demo"), tmp_path)
    write(str(own_model), load_model(str(own_model)), tmp_path)
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    assert set(manifest["models"]) == {"demo", str(own_model)}
    assert read(tmp_path, "demo") == load_model("demo")
    assert read(tmp_path, str(own_model)) == load_model(str(own_model))


def test_a_model_changed_since_its_build_is_refused(tmp_path: Path, own_model: Path) -> None:
    write(str(own_model), load_model(str(own_model)), tmp_path / "out")
    own_model.write_text(own_model.read_text() + "\n# an edit\n")
    with pytest.raises(ModelError) as refused:
        read(tmp_path / "out", str(own_model))
    [line] = refused.value.lines
    assert f"the model {own_model} ({own_model}) has changed since it was built" in line
    assert f"run `edgewise build --model {own_model} --output {tmp_path / 'out'}` again" in line


def test_a_model_the_directory_does_not_hold_is_refused(tmp_path: Path) -> None:
    write("demo", load_model("demo"), tmp_path)
    with pytest.raises(ModelError) as refused:
        read(tmp_path, "orders")
    [line] = refused.value.lines
    assert "holds no build of the model orders (it holds: demo)" in line
    assert "edgewise build --model orders" in line and "unset EDGEWISE_COMPILED" in line
    with pytest.raises(ModelError, match=r"no manifest\.json"):
        read(tmp_path / "empty", "demo")


def test_a_build_by_another_engine_is_refused(tmp_path: Path) -> None:
    write("demo", load_model("demo"), tmp_path)
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    manifest["engine"] = "0" * 64  # the model compiler's source was another
    (tmp_path / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ModelError) as refused:
        read(tmp_path, "demo")
    assert "built by another version of Edgewise" in refused.value.lines[0]


def test_serve_refuses_a_stale_build_at_start(tmp_path: Path, own_model: Path) -> None:
    out = tmp_path / "out"
    assert edgewise("build", "--model", str(own_model), "--output", str(out)).returncode == 0
    own_model.write_text(own_model.read_text().replace("Customer", "Client"))
    served = edgewise(
        "serve", "--model", str(own_model), "--compiled", str(out), "--port", str(free_port())
    )
    assert served.returncode == 1, served
    assert "has changed since it was built" in served.stderr
    assert f"no usable build of the model {own_model} in {out}" in served.stderr
    assert "Traceback" not in served.stderr
