# Two entry points for a fresh machine with only python3: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-browser bench schema clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/hilbot demo

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup --ignore=tests/browser  # two workers: about 6 minutes on 2 cores

# The dashboard in a real browser: Debian's Chromium (apt-get install -y chromium), driven by
# Playwright with executable_path; no browser is downloaded.
$(VENV)/.browser: $(STAMP)
	$(BIN)/pip install --quiet -e ".[test,browser]"
	touch $(VENV)/.browser

test-browser: $(VENV)/.browser
	$(BIN)/python -m pytest -q tests/browser

bench: $(STAMP)
	$(BIN)/python bench/startup.py
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/judge.py
	$(BIN)/python bench/push.py
	$(BIN)/python bench/push_slack.py
	$(BIN)/python bench/load.py
	$(BIN)/python bench/agreement.py
	$(BIN)/python bench/triage.py
	-$(BIN)/python bench/scale.py --sizes 10000,100000
	$(BIN)/python bench/bot_start.py --ratings 100000 --repeat 1
	$(BIN)/python bench/dashboard.py
	-$(BIN)/python bench/connectors.py  # exits 1 while a phase misses its 1.2x goal
	$(BIN)/python bench/replicas.py

schema: $(STAMP)
	$(BIN)/hilbot schema > docs/schema.json

clean:
	rm -rf $(VENV) .pytest_cache
