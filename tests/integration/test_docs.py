"""The README is a front page (what it is, two commands, one example, links into the site) and
the manual is the MkDocs site in docs/: its links resolve, every page is in the nav, and
`make test` builds it (`make docs`, `mkdocs build --strict`) with what the `docs` extra installs."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

LINK = re.compile(r"\]\(([^)\s]+)\)")


def nav_pages(nav: list[Any]) -> list[str]:
    pages: list[str] = []
    for entry in nav:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_the_readme_is_a_front_page_of_at_most_250_lines() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    assert "make serve" in text and "curl" in text and "```graphql" in text
    assert "docs/tutorial.md" in text and "docs/models/reference.md" in text


def test_the_readmes_links_lead_to_files_and_its_docs_links_to_pages_of_the_site() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    pages = set(nav_pages(config["nav"]))
    links = [link for link in LINK.findall(README.read_text()) if "://" not in link]
    assert links
    for link in links:
        path = link.split("#", 1)[0]
        assert (ROOT / path).is_file(), link
        if path.startswith("docs/"):
            assert path.removeprefix("docs/") in pages, f"{link} is not in mkdocs.yml's nav"


def test_every_page_of_docs_is_in_the_nav() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    pages = sorted(nav_pages(config["nav"]))
    on_disk = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md") if "hooks" not in p.parts)
    assert pages == on_disk
    assert config["docs_dir"] == "docs" and config["site_dir"] == "site"
    assert config["theme"]["name"] == "material" and config["strict"] is True


def test_make_test_builds_the_site_with_the_docs_extra() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert {re.split(r"[<>=]", d)[0] for d in extras["docs"]} == {"mkdocs", "mkdocs-material"}
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"pip install .*-e '\.\[[^']*\bdocs\b[^']*\]'", makefile)
    docs = re.search(r"^docs: .*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    # --quiet would hide the warnings --strict counts, and a broken link would pass.
    assert docs and "mkdocs build --strict" in docs.group(1) and "--quiet" not in docs.group(1)
    test = re.search(r"^test: .*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert test and "$(MAKE) docs" in test.group(1)
    assert "site/" in (ROOT / ".gitignore").read_text().splitlines()
