PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test playground browser schema clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,embedded]'
	touch $@

playground/node_modules/.package-lock.json: playground/package.json playground/package-lock.json
	cd playground && npm ci --no-audit --no-fund --loglevel=error

playground: playground/node_modules/.package-lock.json

# Headless Chromium for the playground test (Debian's package).
browser:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

serve: $(STAMP) playground
	$(BIN)/edgewise serve

test: $(STAMP) playground browser
	$(BIN)/ruff check graph server tests
	$(BIN)/ruff format --check graph server tests
	$(BIN)/mypy
	$(BIN)/pytest

schema: $(STAMP)
	$(BIN)/edgewise export-schema --output schema.graphql

clean:
	rm -rf $(VENV) playground/node_modules
