# Two commands on a fresh machine: `make run` and `make test`.
# Both create .venv on first use (and again whenever pyproject.toml changes).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint migrate clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

migrate: $(STAMP)
	$(BIN)/flask --app svc db upgrade

## run: apply migrations, then run the Procfile in the foreground: gunicorn on SVC_BIND with
## SVC_WORKERS workers, and the one scheduler process. Ctrl-C or SIGTERM stops both.
run: migrate
	exec $(BIN)/honcho --no-colour --env /dev/null --procfile Procfile start

## test: the whole suite (SQLite; PostgreSQL too when SVC_TEST_DATABASE_URL is set)
test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check svc tests
	$(BIN)/ruff format --check svc tests

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
