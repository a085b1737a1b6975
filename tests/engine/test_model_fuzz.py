"""No model that check-model accepts fails at run time (MODELS.md, "Items decide their type";
issue 30, item 6). Model files are drawn from the format's grammar (:mod:`tests.modelgen`:
coherent drafts, some changed a little), and each one

- is checked by ``edgewise check-model``, in process through the CLI's own ``main``: it either
  refuses with exit 1 and one line per mistake, ``<dotted.path> (line N): <problem>; <what to
  write instead>``, or accepts with exit 0 and its summary; never a traceback;
- once accepted, is served over a table created with its layout on moto: introspection answers,
  and every root lookup (with drawn arguments), ``node(id:)``/``nodes(ids:)`` on drawn ids and
  every generated mutation (drawn valid and invalid arguments) answers data or errors that each
  carry an ``extensions.code``, never HTTP 500 and never INTERNAL_SERVER_ERROR; on the empty
  table, then after the creates, so lookups find items (:mod:`tests.requestgen`).

``make test`` runs a few dozen derandomized examples; ``EDGEWISE_FUZZ_EXAMPLES=N`` (``make
fuzz-models``) runs N random ones of each test instead. Every model a run found failing is kept
below as an explicit example.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from graphql import build_client_schema, get_introspection_query
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from graph.dynamo.client import Endpoint, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import Table
from server.cli.main import main
from server.engine import engine_for
from server.http.app import create_app
from server.settings import Settings
from tests.helpers import LEAN
from tests.modelgen import models, mutated
from tests.requestgen import Draw, Pools, chance, operation, order_of_mutations
from tests.tokens import SECRET, bearer, hs256

FUZZ_EXAMPLES = os.environ.get("EDGEWISE_FUZZ_EXAMPLES")
CHECKED = int(FUZZ_EXAMPLES or 40)  # models through check-model alone
SERVED = int(FUZZ_EXAMPLES or 8)  # models checked, then served and asked
# `<dotted.path> (line N): <problem>; <what to write instead>` (some say `<problem>: <fix>`)
LINE = re.compile(r"^[^\s:]+(?: \(line \d+\))?: \S.*(?:; |: )\S.*$")
FUZZ = settings(
    derandomize=FUZZ_EXAMPLES is None,  # make test: the same examples every run
    database=None,  # no .hypothesis/ folder
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
# A served example takes a table and dozens of requests: a failure is reported as found (its model
# and request in the message), not shrunk for minutes.
SERVING = settings(FUZZ, phases=[Phase.explicit, Phase.reuse, Phase.generate])


def check_model(path: Path) -> tuple[int, str, list[str]]:
    """``edgewise check-model PATH`` through the CLI's own entry point: its exit status, what
    it printed and its lines on stderr. Anything but an exit (a traceback) propagates."""
    out, err = io.StringIO(), io.StringIO()
    status: Any = 0
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main(["check-model", str(path)])
        except SystemExit as exc:
            status = exc.code
    return status, out.getvalue(), err.getvalue().splitlines()


def checked(path: Path, data: dict[str, Any]) -> bool:
    """Write ``data`` to ``path`` and check it: whether check-model accepted it, after
    asserting that it answered as documented either way."""
    text = yaml.safe_dump(data, sort_keys=False)
    path.write_text(text)
    status, summary, lines = check_model(path)
    assert status in (0, 1), (status, lines, text)
    if status == 1:
        assert lines, text
        for line in lines:
            assert LINE.match(line), (line, text)
        return False
    assert not lines and summary, (lines, text)
    return True


# ---- serving ------------------------------------------------------------------------------


class Asker:
    """Sends operations to one served model and holds each answer to the rule: data or coded
    errors, never HTTP 500 or INTERNAL_SERVER_ERROR."""

    def __init__(
        self, http: httpx.AsyncClient, schema: Any, draw: Draw, tokens: list[str | None]
    ) -> None:
        self.http, self.schema, self.draw, self.tokens = http, schema, draw, tokens
        self.pools = Pools()
        self.sent = 0
        self.answered: list[tuple[str, str, bool]] = []  # (root, field, whether it found data)

    async def send(
        self, document: str, variables: dict[str, Any], token: str | None = None
    ) -> dict[str, Any]:
        headers = bearer(token) if token else {}
        response = await self.http.post(
            "/graphql", json={"query": document, "variables": variables}, headers=headers
        )
        self.sent += 1
        what = (document, variables, response.status_code, response.text[:2000])
        body: dict[str, Any] = response.json()
        assert "data" in body or body.get("errors"), what
        codes = [e.get("extensions", {}).get("code") for e in body.get("errors", [])]
        assert None not in codes, what
        assert "INTERNAL_SERVER_ERROR" not in codes, what
        # 503 is DynamoDB's own (moto slow on a loaded machine), never the model's
        assert response.status_code < 500 or set(codes) == {"UNAVAILABLE"}, what
        return body

    async def ask(self, root: str, name: str) -> None:
        """One drawn request for a root field, as one of the tokens."""
        op = operation(self.draw, self.schema, root, name, self.pools)
        token = (
            self.tokens[0] if chance(self.draw, 0.5) else self.draw(st.sampled_from(self.tokens))
        )
        body = await self.send(op.document, op.variables, token)
        found = isinstance(body.get("data"), dict) and body["data"].get(name) not in (None, [])
        self.answered.append((root, name, found))
        if root == "mutation" and found:
            self.pools.add("", op.variables)  # what a successful write was given
        if isinstance(body.get("data"), dict):
            self.pools.add("", body["data"])

    async def ask_everything(self) -> None:
        """Every root lookup on the empty table, then twice every mutation (creates first) and
        every lookup again, so updates, edges, deletes and lookups find what was created."""
        query, mutation = self.schema.query_type, self.schema.mutation_type
        lookups = list(query.fields) if query else []
        writes = order_of_mutations(list(mutation.fields) if mutation else [])
        for name in lookups:
            await self.ask("query", name)
        for _ in range(2):
            for name in writes:
                await self.ask("mutation", name)
            for name in lookups:
                await self.ask("query", name)


@asynccontextmanager
async def served(
    dynamodb: EmbeddedDynamoDB, path: Path, draw: Draw, sample: dict[str, Any] | None = None
) -> AsyncIterator[Asker]:
    """The model at ``path`` served over a fresh table created with its layout (holding the
    items of ``sample``, as in a ``sample.yaml``), introspected: an :class:`Asker` for it, whose
    drawn requests are an admin's, a principal's or signed out where the model has access
    rules."""
    dynamodb.reset()
    engine = engine_for(str(path))
    name = engine.model.table or "fuzz"
    tokens: list[str | None] = [None]
    secret = None
    if engine.model.access is not None:
        tokens = [hs256("admin", roles=["admin"]), hs256("a1"), hs256("b2"), None]
        secret = SECRET
    async with open_client(Endpoint(dynamodb.url), lean=LEAN) as client:
        await create_table(client.control, name, layout=engine.layout)
        table = Table(client, name, layout=engine.layout)
        if sample is not None:
            await table.batch_write(engine.items(table, sample))
        app = create_app(Settings(model=str(path), table=name, jwt_secret=secret), table=table)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://fuzz") as http:
            asker = Asker(http, None, draw, tokens)
            introspected = await asker.send(get_introspection_query(), {}, tokens[0])
            asker.schema = build_client_schema(introspected["data"])
            yield asker


async def serve_and_ask(dynamodb: EmbeddedDynamoDB, path: Path, draw: Draw) -> Asker:
    """Serve the model at ``path`` and ask it everything; what was asked."""
    async with served(dynamodb, path, draw) as asker:
        await asker.ask_everything()
        return asker


# ---- the properties -----------------------------------------------------------------------


@given(data=mutated())
@settings(FUZZ, max_examples=CHECKED)
def test_check_model_refuses_with_lines_or_accepts(tmp_path: Path, data: dict[str, Any]) -> None:
    checked(tmp_path / "model.yaml", data)


@given(data=mutated(models()), draw=st.data())
@settings(SERVING, max_examples=SERVED)
def test_an_accepted_model_answers_without_server_errors(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path, data: dict[str, Any], draw: st.DataObject
) -> None:
    path = tmp_path / "model.yaml"
    if checked(path, data):
        try:
            asyncio.run(serve_and_ask(dynamodb, path, draw.draw))
        except AssertionError as failed:
            failed.add_note(f"the model:\n{path.read_text()}")
            raise


def test_the_generator_drafts_mostly_valid_models(tmp_path: Path) -> None:
    """A generator whose drafts check-model refuses would test the refusals alone."""
    accepted = []

    @given(data=models())
    @settings(FUZZ, max_examples=10)
    def count(data: dict[str, Any]) -> None:
        accepted.append(checked(tmp_path / "model.yaml", data))

    count()
    assert sum(accepted) >= len(accepted) * 0.6, accepted


# ---- every model a run found failing, kept ------------------------------------------------

# Each: `name`, `model` (the file), and `refused` (the line or lines check-model prints), or
# `served` (requests each answering data or coded errors, sent as the token of `subject` if
# given, over the items of `sample` if given; one given as `{request, data}` answers exactly
# that data), or
# neither (refused with lines, or served and asked drawn requests).
FOUND = yaml.safe_load((Path(__file__).parent / "model_fuzz_found.yaml").read_text())
CASES = [pytest.param(case, id=case["name"]) for case in FOUND]


@pytest.mark.parametrize("case", CASES)
def test_a_model_found_failing_is_refused_or_served(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path, case: dict[str, Any]
) -> None:
    path = tmp_path / "model.yaml"
    path.write_text(case["model"])
    status, _, lines = check_model(path)
    if "refused" in case:
        refused = case["refused"]
        assert (status, lines) == (1, refused if isinstance(refused, list) else [refused])
        return
    if "served" not in case and status == 1:
        assert all(LINE.match(line) for line in lines), lines  # either will do
        return
    assert (status, lines) == (0, [])
    token = hs256(case["subject"]) if "subject" in case else None

    async def ask(draw: Draw) -> None:
        async with served(dynamodb, path, draw, case.get("sample")) as asker:
            for request in case.get("served", ()):
                if isinstance(request, str):
                    await asker.send(request, {}, token)
                else:  # {request, data}: the exact answer, with no error
                    body = await asker.send(request["request"], {}, token)
                    assert body == {"data": request["data"]}, (request, body)
            if not case.get("served"):
                await asker.ask_everything()

    @given(draw=st.data())
    @settings(SERVING, max_examples=1)
    def once(draw: st.DataObject) -> None:
        asyncio.run(ask(draw.draw))

    once()
