"""`edgewise serve` flags for frontends: --cors-origin (and EDGEWISE_CORS_ORIGINS),
--no-persisted-queries and --persisted-queries-only, read into the app's settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from graph.errors import BadUserInput
from server.cli import main
from server.cli import serve as serve_command
from server.http.cors import parse_origins
from server.settings import Settings


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The apps `edgewise serve` would run (uvicorn is not started, and the process's logging
    is left as pytest set it)."""
    apps: list[Any] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: apps.append(app))
    monkeypatch.setattr(serve_command, "configure", lambda *args, **options: None)
    monkeypatch.delenv("EDGEWISE_CORS_ORIGINS", raising=False)
    monkeypatch.delenv("EDGEWISE_PERSISTED_QUERIES_ONLY", raising=False)
    return apps


def settings_of(served: list[Any], *flags: str) -> Settings:
    main(["serve", *flags])
    [app] = served
    settings: Settings = app.state.settings
    return settings


def test_cors_origins_repeat(served: list[Any]) -> None:
    settings = settings_of(
        served, "--cors-origin", "http://localhost:5173", "--cors-origin", "https://App.example"
    )
    assert settings.cors_origins == ("http://localhost:5173", "https://app.example")


def test_cors_origins_from_the_environment(
    served: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDGEWISE_CORS_ORIGINS", "http://localhost:3000, https://app.example")
    assert settings_of(served).cors_origins == ("http://localhost:3000", "https://app.example")


def test_no_cors_origin_leaves_the_default(served: list[Any]) -> None:
    assert settings_of(served).cors_origins == ()


def test_persisted_query_flags(served: list[Any], tmp_path: Path) -> None:
    manifest = tmp_path / "persisted-documents.json"
    manifest.write_text(json.dumps({"abc": "{ __typename }"}))
    assert settings_of(served).persisted_queries is True
    served.clear()
    assert settings_of(served, "--no-persisted-queries").persisted_queries is False
    served.clear()
    settings = settings_of(served, "--persisted-queries-only", str(manifest))
    assert settings.persisted_queries_only == manifest
    assert served[0].state.persisted.manifest.bodies == {"abc": "{ __typename }"}


@pytest.mark.parametrize(
    "flags",
    [
        ["--cors-origin", "http://localhost:5173/"],
        ["--cors-origin", "localhost:5173"],
        ["--persisted-queries-only", "missing.json"],
        ["--persisted-queries-only", "m.json", "--no-persisted-queries"],
    ],
)
def test_bad_flags_stop_serve_with_what_to_fix(served: list[Any], flags: list[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["serve", *flags])
    message = str(raised.value)
    assert message.startswith("edgewise serve: --")
    assert served == []


@pytest.mark.parametrize(
    ("values", "origins"),
    [
        ([], ()),
        ([""], ()),
        (["*"], ("*",)),
        (
            ["http://a.example,http://b.example:8080", "http://a.example"],
            ("http://a.example", "http://b.example:8080"),
        ),
        (["HTTPS://APP.example"], ("https://app.example",)),
    ],
)
def test_parse_origins(values: list[str], origins: tuple[str, ...]) -> None:
    assert parse_origins(values) == origins


@pytest.mark.parametrize(
    "bad",
    ["http://a.example/", "http://a.example/path", "a.example", "ftp://a", "http://*.example"],
)
def test_parse_origins_refuses_what_is_not_an_origin(bad: str) -> None:
    with pytest.raises(BadUserInput, match="scheme://host"):
        parse_origins([bad])


def test_client_flag_and_environment_choose_the_data_plane(
    served: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EDGEWISE_CLIENT", raising=False)
    assert settings_of(served).client == "lean"
    served.clear()
    assert settings_of(served, "--client", "botocore").client == "botocore"
    served.clear()
    monkeypatch.setenv("EDGEWISE_CLIENT", "botocore")
    assert settings_of(served).client == "botocore"


def test_flags_win_over_the_environment_and_fill_what_is_left(
    served: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDGEWISE_DEADLINE", "3")
    monkeypatch.setenv("EDGEWISE_PORT", "9001")
    monkeypatch.setenv("EDGEWISE_LIMIT_DEPTH", "6")
    settings = settings_of(served, "--deadline", "4.5")
    assert (settings.deadline, settings.port, settings.limits.depth) == (4.5, 9001, 6)
    assert served[0].state.limits.depth == 6


@pytest.mark.parametrize(
    ("name", "value", "told"),
    [
        ("EDGEWISE_PRODUCTION", "maybe", "valid boolean"),
        ("EDGEWISE_PORT", "eighty", "valid integer"),
        ("EDGEWISE_LOG_FORMAT", "xml", "use text or json"),
        ("EDGEWISE_LIMIT_COST", "lots", "whole number"),
        ("EDGEWISE_CLIENT", "fast", "use lean or botocore"),
    ],
)
def test_a_bad_environment_value_stops_serve_naming_it(
    served: list[Any], monkeypatch: pytest.MonkeyPatch, name: str, value: str, told: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as raised:
        main(["serve"])
    assert f"{name}={value!r}" in str(raised.value) and told in str(raised.value)
    assert served == []


def test_safe_retry_and_explain_forbidden_flags(
    served: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDGEWISE_IDEMPOTENCY_TTL", "60")
    settings = settings_of(served)
    assert (settings.idempotency_ttl, settings.explain_forbidden) == (60, False)
    served.clear()
    settings = settings_of(served, "--idempotency-ttl", "3600", "--explain-forbidden")
    assert (settings.idempotency_ttl, settings.explain_forbidden) == (3600, True)
    served.clear()
    with pytest.raises(SystemExit, match="greater than or equal to 1"):
        main(["serve", "--idempotency-ttl", "0"])
    assert served == []


def test_explain_forbidden_is_refused_with_production(served: list[Any]) -> None:
    with pytest.raises(SystemExit, match=r"--explain-forbidden is for development.*--production"):
        main(["serve", "--production", "--explain-forbidden"])
    assert served == []
