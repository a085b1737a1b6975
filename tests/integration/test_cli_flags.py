"""The command line's shape: one module per command, each registered once, and serve's flags
generated from the one settings object (a flag for every setting, its help line, and the order
flag > EDGEWISE_* > default)."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
from pathlib import Path
from typing import Any

import pytest

import server.cli
from server.cli.command import Command
from server.cli.flags import env_of, settings_from
from server.cli.main import COMMANDS, build_parser
from server.settings import Settings, flag_of

ROOT = Path(__file__).resolve().parents[2]
# modules of server/cli/ but not commands
HELPERS = {"breaking", "command", "flags", "main", "summary", "workers"}
SETTINGS = list(Settings.model_fields)
FLAGGED = [name for name in SETTINGS if not flag_of(name).env_only]


def subparser(name: str) -> argparse.ArgumentParser:
    [commands] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    parser: argparse.ArgumentParser = commands.choices[name]
    return parser


def settings_for(*argv: str) -> Settings:
    return settings_from(build_parser().parse_args(["serve", *argv]))


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in SETTINGS:
        monkeypatch.delenv(env_of(name), raising=False)
    return monkeypatch


def test_each_command_module_registers_its_command_once() -> None:
    modules = sorted(
        info.name for info in pkgutil.iter_modules(server.cli.__path__) if info.name not in HELPERS
    )
    registered = [command.name for command in COMMANDS]
    assert sorted(name.replace("-", "_") for name in registered) == modules
    assert len(set(registered)) == len(registered)
    for name in modules:
        command = importlib.import_module(f"server.cli.{name}").COMMAND
        assert isinstance(command, Command) and command in COMMANDS
        assert command.name == name.replace("_", "-")


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_every_command_has_its_help(command: Command, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        build_parser().parse_args([command.name, "--help"])
    assert raised.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: edgewise {command.name} ")


# The flags each command had before they were generated (docs and scripts name them): a field
# renamed in Settings would rename its flag, and this fails.
CONNECTION = "--dynamodb --table --model"
FLAGS = {
    "serve": f"{CONNECTION} --host --port --demo --no-demo --data-file --production --read-only "
    "--explain-forbidden --idempotency-ttl --cors-origin --persisted-queries "
    "--no-persisted-queries --persisted-queries-only --deadline --connect-timeout --read-timeout "
    "--client --subscriptions --no-subscriptions --pubsub --metrics --no-metrics --log-format "
    "--shutdown-timeout --workers --federation",
    "create-table": f"{CONNECTION} --print-cloudformation",
    "seed": f"{CONNECTION} --demo --users --groups --products --memberships --subscriptions "
    "--random-seed",
    "load": CONNECTION,
    "dump": CONNECTION,
    "rebuild": f"{CONNECTION} --field --dry-run",
    "relay": f"{CONNECTION} --pubsub --lease-ttl",
    "export-schema": "--model --output --federation",
    "check-model": f"{CONNECTION} --against",
    "infer": "--dynamodb --table --sample --output",
    "import-model": "--from --table --output",
    "model-schema": "",
}


@pytest.mark.parametrize(("command", "flags"), FLAGS.items())
def test_every_flag_of_before_is_still_there(command: str, flags: str) -> None:
    spelled = {s for a in subparser(command)._actions for s in a.option_strings}
    assert set(flags.split()) <= spelled


def test_every_setting_is_described_and_flagged_or_listed_as_environment_only() -> None:
    help_text = " ".join(subparser("serve").format_help().split())  # unwrapped
    for name, field in Settings.model_fields.items():
        flag = flag_of(name)
        assert field.description, f"Settings.{name} has no description"
        assert env_of(name) in help_text, name
        if flag.env_only:
            assert f"{env_of(name)}: {field.description}" in help_text
        else:
            assert f"{flag.spelling(name)}" in help_text
    options = {a.dest: a for a in subparser("serve")._actions if a.option_strings}
    assert set(options) - {"help"} == set(FLAGGED)
    for name in FLAGGED:
        assert options[name].option_strings[0] == flag_of(name).spelling(name)
        assert options[name].default is None  # not given: the environment decides
        assert options[name].help and env_of(name) in options[name].help


def test_serve_help_groups_its_flags() -> None:
    titles = [group.title for group in subparser("serve")._action_groups]
    for name in FLAGGED:
        assert flag_of(name).group in titles


@pytest.mark.parametrize(
    ("flags", "env", "name", "default", "from_env", "from_flag"),
    [
        (["--port", "9002"], "9001", "port", 8000, 9001, 9002),
        (["--deadline", "4.5"], "3", "deadline", 10.0, 3.0, 4.5),
        (["--demo"], "0", "demo", True, False, True),
        (["--no-metrics"], "1", "metrics", None, True, False),
        (["--read-only"], "0", "read_only", False, False, True),
        (
            ["--cors-origin", "http://c.example", "--cors-origin", "http://d.example"],
            "http://a.example, http://b.example",
            "cors_origins",
            (),
            ("http://a.example", "http://b.example"),
            ("http://c.example", "http://d.example"),
        ),
        (
            ["--data-file", "flag.jsonl"],
            "env.jsonl",
            "data_file",
            None,
            Path("env.jsonl"),
            Path("flag.jsonl"),
        ),
        (["--log-format", "text"], "JSON", "log_format", "text", "json", "text"),
        (["--client", "lean"], "botocore", "client", "lean", "botocore", "lean"),
        (["--jwt-issuer", "flag"], "env", "jwt_issuer", None, "env", "flag"),
    ],
)
def test_a_flag_wins_over_the_environment_which_wins_over_the_default(
    clean_env: pytest.MonkeyPatch,
    flags: list[str],
    env: str,
    name: str,
    default: Any,
    from_env: Any,
    from_flag: Any,
) -> None:
    assert getattr(settings_for(), name) == default
    clean_env.setenv(env_of(name), env)
    assert getattr(settings_for(), name) == from_env
    assert getattr(settings_for(*flags), name) == from_flag


def test_the_flags_left_out_are_filled_in_from_the_settings(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("EDGEWISE_TABLE", "from-env")
    args = build_parser().parse_args(["seed", "--dynamodb", "http://127.0.0.1:1"])
    settings = settings_from(args)
    assert (args.table, args.model, args.dynamodb) == ("from-env", "demo", "http://127.0.0.1:1")
    assert settings.dynamodb == "http://127.0.0.1:1"


@pytest.mark.parametrize(
    ("flags", "told"),
    [
        (["--idempotency-ttl", "0"], "--idempotency-ttl 0: Input should be greater than"),
        (["--subscriptions-max", "0"], "--subscriptions-max 0: Input should be greater than"),
        (["--cors-origin", "a.example"], "--cors-origin 'a.example' is not an origin"),
    ],
)
def test_a_bad_flag_value_names_the_flag(
    clean_env: pytest.MonkeyPatch, flags: list[str], told: str
) -> None:
    with pytest.raises(SystemExit) as raised:
        settings_for(*flags)
    assert str(raised.value).startswith(f"edgewise serve: {told}")


@pytest.mark.parametrize(
    "flags", [["--log-format", "xml"], ["--client", "fast"], ["--port", "x"], ["--workers", "0"]]
)
def test_a_flag_argparse_refuses_is_a_usage_error(
    flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as raised:
        build_parser().parse_args(["serve", *flags])
    assert raised.value.code == 2
    assert f"argument {flags[0]}" in capsys.readouterr().err


def test_the_reference_page_lists_every_setting() -> None:
    page = (ROOT / "docs" / "reference" / "cli.md").read_text()
    rows = re.findall(r"^\| `([^`]+)`", page, re.MULTILINE)
    for name in SETTINGS:
        flag = flag_of(name)
        if flag.env_only:  # EDGEWISE_LIMIT_<NAME> is listed as EDGEWISE_LIMIT_DEPTH, …
            wanted = env_of(name).removesuffix("<NAME>")
            assert any(row.startswith(wanted) for row in rows), f"cli.md lists no {wanted}"
        else:
            wanted = flag.spelling(name)
            assert any(row.split()[0] == wanted for row in rows), f"cli.md lists no {wanted}"
