"""The settings convert and refuse values themselves (no pydantic on a cold start): for each of
their types, the value pydantic's lax mode gives, or its refusal in its words; and the object
behaves as the pydantic model did (frozen, ``model_fields_set``, ``model_copy``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from server.http.limits import Limits
from server.settings import Settings, SettingsError

CASES: list[tuple[str, Any]] = [
    # (field, value given)
    ("production", "1"),
    ("production", "TRUE"),
    ("production", " yes "),
    ("production", "off"),
    ("production", "maybe"),
    ("production", 1),
    ("production", 2),
    ("metrics", "0"),
    ("metrics", None),
    ("port", "9001"),
    ("port", " 9001 "),
    ("port", "9001.0"),
    ("port", "9001.5"),
    ("port", "eighty"),
    ("port", 9001.0),
    ("port", 9001.5),
    ("deadline", "2.5"),
    ("deadline", "1e1"),
    ("deadline", "soon"),
    ("deadline", 3),
    ("table", "graph"),
    ("table", None),
    ("table", 7),
    ("data_file", "/tmp/x.jsonl"),
    ("data_file", Path("/tmp/x.jsonl")),
    ("data_file", 7),
    ("idempotency_ttl", "0"),
    ("idempotency_ttl", "60"),
    ("subscriptions_max", "0"),
    ("port", True),
    ("port", "1_000"),
    ("port", "-5"),
    ("port", "0x10"),
    ("deadline", True),
    ("deadline", " 2.5 "),
    ("deadline", "inf"),
    ("production", 0.0),
    ("production", "ON"),
    ("production", "t"),
    ("production", ""),
    ("limits", Limits(depth=3)),
    ("limits", "deep"),
    ("limits", {"depth": 4}),
]


def pydantic_says(field: str, value: Any) -> tuple[Any, str | None]:
    info = Settings.model_fields[field]
    adapter: TypeAdapter[Any] = TypeAdapter(info.annotation)
    try:
        converted = adapter.validate_python(value)
    except ValidationError as exc:
        return None, exc.errors()[0]["msg"]
    if info.ge is not None and converted < info.ge:
        return None, f"Input should be greater than or equal to {info.ge:g}"
    return converted, None


@pytest.mark.parametrize(("field", "value"), CASES, ids=repr)
def test_a_value_is_converted_or_refused_as_pydantic_does(field: str, value: Any) -> None:
    expected, refusal = pydantic_says(field, value)
    if refusal is None:
        converted = getattr(Settings(**{field: value}), field)
        assert converted == expected and type(converted) is type(expected)
    else:
        with pytest.raises(SettingsError) as refused:
            Settings(**{field: value})
        assert refused.value.errors == [(field, refusal, value)]


def test_an_unknown_setting_is_refused() -> None:
    with pytest.raises(SettingsError) as refused:
        Settings(prt=8000)
    assert refused.value.errors == [("prt", "Extra inputs are not permitted", 8000)]


def test_the_object_is_frozen_and_copies_as_the_pydantic_model_did(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EDGEWISE_PORT", "9001")
    monkeypatch.setenv("edgewise_read_only", "1")  # any case, as pydantic-settings read them
    monkeypatch.setenv("EDGEWISE_TABLE", "")  # empty: not set
    settings = Settings(model="orders")
    assert (settings.port, settings.read_only, settings.table, settings.model) == (
        9001,
        True,
        None,
        "orders",
    )
    assert settings.model_fields_set == {"port", "read_only", "model"}
    assert settings.limits == Limits()
    with pytest.raises(AttributeError):
        settings.port = 1  # type: ignore[misc]
    copy = settings.model_copy(update={"table": "other"})
    assert (copy.table, copy.port, settings.table) == ("other", 9001, None)
    assert copy.model_fields_set == {"port", "read_only", "model", "table"}
    assert settings == Settings(model="orders") and hash(settings) == hash(Settings(model="orders"))
    assert copy != settings
