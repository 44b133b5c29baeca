# Two commands on a fresh machine: `make run` and `make test`.
# Both create .venv on first use (and again whenever pyproject.toml changes): `make run` with
# what the service needs alone, `make test` adds the tools of the tests (the dev extras).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.test-installed
CHROMIUM := /usr/bin/chromium
HEADLESS_SHELL := /usr/bin/chromium-headless-shell
NPM ?= /usr/bin/npm
NODE_STAMP := node_modules/.installed
NODE_RUN_STAMP := node_modules/.run-installed
WRK := /usr/bin/wrk
BENCH_STAMP := $(VENV)/.bench-installed
# setuptools warns at every editable install that a folder named like the package may shadow
# it: that folder is the package itself here. Its warnings are UserWarnings.
PIP := PYTHONWARNINGS=ignore::UserWarning $(BIN)/python -m pip install --quiet

.PHONY: run test test-container screenshots lint migrate clean load bench translations-extract translations-update

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(PIP) -e .
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(PIP) -e '.[dev]'
	touch $(TEST_STAMP)

migrate: $(STAMP)
	$(BIN)/flask --app svc db upgrade

# The reporter's language (svc/i18n.py): the catalogs are written by hand and committed, each
# compiled here for the service to read (make run and make test do it; the .mo files are not
# committed). Two domains: messages (the status page, mails) and widget (widget.js's words).
CATALOGS := $(wildcard svc/translations/*/LC_MESSAGES/*.po)
COMPILED := $(CATALOGS:.po=.mo)
svc/translations/%.mo: svc/translations/%.po | $(STAMP)
	$(BIN)/pybabel compile -i $< -o $@

## translations-extract: the English messages of the code and the status page into
## svc/translations/messages.pot, the widget's into widget.pot; translations-update merges
## them into every catalog
EXTRACT = $(BIN)/pybabel extract -k speak -k speakPlural:1,2 -k N_ --no-wrap --sort-by-file \
	--project svc --omit-header
translations-extract: $(STAMP)
	$(EXTRACT) -F babel.cfg -o svc/translations/messages.pot .
	$(EXTRACT) -F babel-widget.cfg -o svc/translations/widget.pot .

translations-update: $(STAMP)
	for domain in messages widget; do \
	    $(BIN)/pybabel update --no-wrap --no-fuzzy-matching -D $$domain \
	        -i svc/translations/$$domain.pot -d svc/translations || exit 1; \
	done

## run: apply migrations, then run the Procfile in the foreground: gunicorn on SVC_BIND with
## SVC_WORKERS workers, and a scheduler process (SVC_ROLE=web or scheduler: that one alone).
## Ctrl-C, SIGTERM or SIGHUP to make (or make killed outright) stops every process. Warns when the interpreter is older than PYTHON_TESTED, the
## oldest release the suite ran on. svc.serve does it, as in the container.
run: $(STAMP) $(NODE_RUN_STAMP) $(COMPILED)
	@$(BIN)/python -c "$$PYTHON_CHECK" "$(PYTHON_TESTED)"
	@# One plain command, so that make runs svc.serve itself (no shell between): make passes a
	@# SIGTERM on to it, and svc.serve stops every process (and exits 0 when stopped as asked).
	$(BIN)/python -m svc.serve

PYTHON_TESTED ?= 3.11.7
export define PYTHON_CHECK
import sys
tested = sys.argv[1]
if sys.version_info[:3] < tuple(int(part) for part in tested.split(".")):
    print(f"warning: Python {sys.version.split()[0]} is older than {tested}, the oldest release "
          "svc is tested on, and lacks its security fixes: install a newer one, then "
          "make clean run PYTHON=/path/to/it", file=sys.stderr)
endef

## test: the whole suite (SQLite; PostgreSQL too when SVC_TEST_DATABASE_URL is set), the
## dashboard's tests in Debian's headless Chromium included
# The suite starts svc in hundreds of processes; where the environment says
# PYTHONDONTWRITEBYTECODE (CI's does), each compiles svc's sources again: 0.25 s of CPU apiece
# (docs/performance.md). Their bytecode goes to the ignored __pycache__ folders.
test test-container bench load screenshots: export PYTHONDONTWRITEBYTECODE :=
test: $(TEST_STAMP) $(CHROMIUM) $(HEADLESS_SHELL) $(NODE_STAMP) $(COMPILED)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

## test-container: svc's image built with podman on a Debian base made by mmdebstrap, then
## run: answers, keeps its volume, stops at once (tests/test_container.py; .ci/run runs it)
PODMAN_TOOLS := /usr/bin/podman /usr/bin/mmdebstrap /usr/sbin/runc
test-container: $(TEST_STAMP) $(PODMAN_TOOLS)
	$(BIN)/python -m pytest -m container -n 0 tests/test_container.py $(PYTEST_ARGS)

$(PODMAN_TOOLS):
	$(call apt-install,podman mmdebstrap runc uidmap,The container test needs podman and mmdebstrap)

## screenshots: the browser tests that take the README's pictures, writing them into
## docs/screenshots/ (make test takes them too, and throws them away)
screenshots: $(TEST_STAMP) $(CHROMIUM) $(HEADLESS_SHELL)
	SVC_SCREENSHOTS=1 $(BIN)/python -m pytest -m browser -p no:cacheprovider $(PYTEST_ARGS)

# Debian packages the tests and benchmarks need, installed when missing (root only; CI is root).
# $(call apt-install,package,what needs it)
define apt-install
	@if [ "$$(id -u)" != 0 ]; then echo "$(2): sudo apt-get install $(1)" >&2; exit 1; fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(1) \
	    || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(1))
endef

# Playwright's own browser download is not used. The browser tests drive Chromium's headless
# shell (less CPU), and the full browser where they capture the tab (harness/browser.py).
$(CHROMIUM):
	$(call apt-install,chromium,The dashboard tests need Debian's chromium)

$(HEADLESS_SHELL):
	$(call apt-install,chromium-headless-shell,The browser tests need Debian's chromium-headless-shell)

# The Node packages the tests run (package-lock.json: versions and hashes, no download
# addresses): Playwright's test runner for the repro kit's generated tests, the HAR schema,
# oidc-provider for single sign-on's tests.
$(NODE_STAMP): package.json package-lock.json | $(NPM)
	$(NPM) ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP) $(NODE_RUN_STAMP)

# What the service serves of npm (rrweb, for replay: docs/replay.md). Without npm, and not root
# to install it, svc still sets up and runs, with replay unavailable; the service says so.
# A full install (make test's, or an `npm ci` by hand) serves as it is: `npm ls` says whether
# what is installed is what the lockfile asks for, and a reinstall would drop the test tools.
$(NODE_RUN_STAMP): package.json package-lock.json
	@if [ -f $(NODE_STAMP) ] && [ $(NODE_STAMP) -nt package.json ] \
	    && [ $(NODE_STAMP) -nt package-lock.json ]; then touch $@; \
	elif [ -x $(NPM) ] && [ -d node_modules ] \
	    && $(NPM) ls --omit=dev --depth=0 >/dev/null 2>&1; then touch $@; \
	elif [ -x $(NPM) ] || { [ "$$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -q nodejs npm >/dev/null 2>&1; }; then \
	  $(NPM) ci --omit=dev --no-audit --no-fund --loglevel=error && touch $@ \
	    || echo "npm ci failed: replay will be unavailable" >&2; \
	else echo "npm is not installed: replay will be unavailable (apt-get install nodejs npm)" >&2; fi

$(NPM):
	$(call apt-install,nodejs npm,The repro kit's tests need Node.js and npm)

## load: 200 concurrent clients creating reports for 60 s on SQLite, then on PostgreSQL
## (docs/reliability.md); prints figures, fails only on a lost report or a 5xx
load: $(STAMP)
	$(BIN)/python -m bench.load --database sqlite
	$(BIN)/python -m bench.load --database postgresql

## bench: every benchmark in bench/ (ingest, SQLite's cost per report, webhooks, scale to
## 1,000,000 reports on SQLite and PostgreSQL, the widget's and replay's cost to a page in
## Chromium, ingest
## with screenshots on S3 against a folder and the schedulers' failover; about an hour), then one table of figures beside their targets. Load goes to 127.0.0.1 only. Figures
## in bench/results/, the plot in bench/results/scale.png.
## `make bench BENCH_ARGS=--quick` stops at 100,000 reports with shorter loads;
## `make bench BENCH_ARGS=--smoke` runs each benchmark for seconds (make test runs it).
bench: $(STAMP) $(BENCH_STAMP) $(WRK) $(HEADLESS_SHELL) $(NODE_RUN_STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)

$(BENCH_STAMP): $(TEST_STAMP)
	$(PIP) -e '.[dev,bench]'
	touch $(BENCH_STAMP)

$(WRK):
	$(call apt-install,wrk,The ingest benchmark needs wrk)

lint: $(TEST_STAMP) | $(NPM)
	$(BIN)/ruff check svc tests bench harness
	$(BIN)/ruff format --check svc tests bench harness
	@# The JavaScript svc serves, parsed by Node (a syntax error would reach every browser).
	@for script in $$(git ls-files 'svc/*.js' 'harness/*.mjs'); do node --check $$script || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache node_modules
