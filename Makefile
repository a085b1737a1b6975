PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.bench-installed

.PHONY: serve serve-local test docs playground audit clients dynalite dynamodb-local java browser redis schema clean \
	bench fuzz fuzz-models soak wheel lambda

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,embedded,server,docs]'
	touch $@

playground/node_modules/.package-lock.json: playground/package.json playground/package-lock.json
	cd playground && npm ci --no-audit --no-fund --loglevel=error

playground: playground/node_modules/.package-lock.json

# Node packages of tests/http: the graphql-http audit suite (test_graphql_over_http.py), and the real
# clients of test_clients.py (Apollo Client, urql, puppeteer-core driving Debian's chromium).
tests/http/node_modules/.package-lock.json: tests/http/package.json tests/http/package-lock.json
	cd tests/http && npm ci --no-audit --no-fund --loglevel=error

audit: tests/http/node_modules/.package-lock.json

# Node packages of tests/clients: Relay (relay-compiler, whose npm package holds its native binary,
# and relay-runtime), Apollo Federation (@apollo/gateway, @apollo/subgraph, @apollo/server) and
# graphql-schema-linter, for test_relay.py and test_federation.py.
tests/clients/node_modules/.package-lock.json: tests/clients/package.json tests/clients/package-lock.json
	cd tests/clients && npm ci --no-audit --no-fund --loglevel=error

clients: tests/clients/node_modules/.package-lock.json

# dynalite, a second DynamoDB-compatible server (in memory, no transactions), for the tests.
tests/dynalite/node_modules/.package-lock.json: tests/dynalite/package.json tests/dynalite/package-lock.json
	cd tests/dynalite && npm ci --no-audit --no-fund --loglevel=error

dynalite: tests/dynalite/node_modules/.package-lock.json

# DynamoDB Local, AWS's own emulator, for the tests: DynamoDBLocal.jar and DynamoDBLocal_lib/ as the
# npm package amplify-dynamodb-simulator ships them (nothing downloaded at run time), on Debian's JRE.
tests/dynamodb-local/node_modules/.package-lock.json: tests/dynamodb-local/package.json \
		tests/dynamodb-local/package-lock.json
	cd tests/dynamodb-local && npm ci --no-audit --no-fund --loglevel=error

java:
	@command -v java >/dev/null || { mkdir -p /usr/share/man/man1 && apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null; }

dynamodb-local: java tests/dynamodb-local/node_modules/.package-lock.json

# Headless Chromium for the playground test (Debian's package).
browser:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# Redis for the relay's tests (Debian's package): subscriptions across machines.
redis:
	@command -v redis-server >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; }

serve: $(STAMP) playground
	$(BIN)/edgewise serve

# The same on AWS's DynamoDB Local instead of moto (Java and its jar: make dynamodb-local).
serve-local: $(STAMP) playground dynamodb-local
	$(BIN)/edgewise serve --dynamodb local

# The suites `make test` runs on DynamoDB Local (docs/internals.md, "The engines the tests run
# on"). Only there: transactions, their tokens and isolation, where moto is lenient and slow
# (it copies the table for each action of a transaction).
LOCAL_ONLY := tests/engine/test_replicas.py tests/engine/test_pending.py \
	tests/engine/test_fan_out.py tests/http/test_mutations.py tests/http/test_idempotency.py
# On moto and DynamoDB Local: the data plane, the engine over the shipped models and teams'
# tables, reads with filters and ranges, live queries from the stream, bulk load and dump.
LOCAL_TOO := tests/graph/test_data_plane.py tests/graph/test_streams.py \
	tests/engine/test_model_writes.py tests/engine/test_order_entry.py tests/engine/test_orders.py \
	tests/engine/test_copies.py tests/engine/test_model_deletes.py tests/engine/test_model_constraints.py \
	tests/engine/test_team_tables.py tests/engine/test_team_types.py tests/engine/test_team_objects.py \
	tests/engine/test_team_keys.py tests/engine/test_team_names.py tests/engine/test_access_patterns.py \
	tests/http/test_tickets_offices.py tests/http/test_subscriptions.py \
	tests/integration/test_stream_consumer.py tests/integration/test_bulk.py \
	tests/engine/test_contention.py

test: $(STAMP) playground audit clients dynalite dynamodb-local browser redis
	$(BIN)/ruff check graph server model models tests bench tools docs/hooks
	$(BIN)/ruff format --check graph server model models tests bench tools docs/hooks
	$(BIN)/mypy
	$(BIN)/mypy docs/hooks
	$(MAKE) docs
	$(BIN)/pytest $(addprefix --ignore=,$(LOCAL_ONLY))
	# The data-plane suites again on the botocore client (the run above uses the lean default),
	# the faulted reads 10 runs each instead of 100.
	EDGEWISE_CLIENT=botocore EDGEWISE_FAULT_RUNS=10 $(BIN)/pytest -q tests/integration/test_faults.py \
		tests/engine/test_model_writes.py tests/engine/test_demo_model.py
	# On DynamoDB Local (one JVM per worker): the tests of these suites on the dynamodb fixture.
	EDGEWISE_TEST_ENGINE=local $(BIN)/pytest -q $(LOCAL_ONLY) $(LOCAL_TOO)

# Benchmarks (not part of `make test`): tables on stdout, bench/results/RESULTS.md and plots.
$(BENCH_STAMP): pyproject.toml | $(STAMP)
	$(BIN)/pip install --quiet -e '.[bench]'
	touch $@

bench: $(STAMP) $(BENCH_STAMP)
	$(BIN)/python -m bench

# The soak of issue 6 (not part of `make test`): 5 minutes, 50 clients, 10% throttling; appends a
# Soak section to bench/results/RESULTS.md and exits 1 on a wrong answer or a non-UNAVAILABLE 5xx.
soak: $(STAMP) $(BENCH_STAMP)
	$(BIN)/python -m bench.soak --serial-moto

# A long fuzz run (not part of `make test`, which runs 8 derandomized examples): FUZZ_EXAMPLES
# random documents per root field, valid and invalid, against the served app.
FUZZ_EXAMPLES ?= 200
fuzz: $(STAMP)
	EDGEWISE_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/pytest -q tests/http/test_fuzz.py

# A long run of the model fuzz test (issue 30; `make test` runs a few dozen derandomized
# examples): MODEL_FUZZ_EXAMPLES random model files through check-model, and as many served and
# asked every root field (on 2 shared cores about 8 a second checked, 1 a second served).
MODEL_FUZZ_EXAMPLES ?= 500
fuzz-models: $(STAMP)
	EDGEWISE_FUZZ_EXAMPLES=$(MODEL_FUZZ_EXAMPLES) $(BIN)/pytest -q tests/engine/test_model_fuzz.py

# The wheel (GraphiQL's files built in from playground/package-lock.json) in dist/.
wheel: $(STAMP) playground
	rm -rf dist build
	$(BIN)/python -m build --no-isolation --outdir dist .

# What deploy/template.yaml deploys (CodeUri: dist/lambda): the wheel, Mangum and every
# dependency, as binary wheels for the Lambda runtime (Linux x86_64, Python 3.11), and the model
# compiled by `edgewise build` into dist/lambda/compiled (EDGEWISE_COMPILED in the template), by
# this checkout's code, which the wheel holds (a build by other code is refused at start).
LAMBDA_MODEL ?= demo
lambda: wheel
	$(BIN)/pip install --quiet --target dist/lambda --implementation cp --python-version 3.11 \
		--platform manylinux2014_x86_64 --only-binary=:all: "$$(ls dist/edgewise-*.whl)[lambda]"
	$(BIN)/edgewise build --model $(LAMBDA_MODEL) --output dist/lambda/compiled

# The documentation site (mkdocs.yml, sources in docs/) built into site/; strict: a broken link,
# anchor or a page left out of the nav fails it. docs/hooks/model_reference.py generates the model
# format reference from `edgewise model-schema` at build time. (Not --quiet: it hides the warnings
# that --strict counts, and the build then passes whatever they say.)
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

schema: $(STAMP)
	$(BIN)/edgewise export-schema --output schema.graphql

clean:
	rm -rf $(VENV) playground/node_modules tests/http/node_modules tests/clients/node_modules \
		tests/dynalite/node_modules tests/dynamodb-local/node_modules dist build site
