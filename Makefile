# Every target sets itself up from nothing: a .venv with the project installed.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
EXAMPLE_FLOAT := inspector/resources/examples/example_float.tflite
EXAMPLE_QUANT := inspector/resources/examples/example_int8.tflite

.PHONY: run test lint bench package examples clean

$(VENV)/.installed-run: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@ $(VENV)/.installed-run

run: $(VENV)/.installed-run
	$(VENV)/bin/tflite-inspector gui $(EXAMPLE_FLOAT) $(EXAMPLE_QUANT)

test: $(VENV)/.installed-dev
	$(PY) -m ruff check inspector tests packaging
	$(PY) -m mypy
	$(PY) -m pytest

lint: $(VENV)/.installed-dev
	$(PY) -m ruff check inspector tests packaging
	$(PY) -m mypy

bench: $(VENV)/.installed-dev
	$(PY) tests/perf/run_all.py

# The bundle is built in its own clean venv (build/pkg-venv) so TensorFlow stays out of it.
package:
	bash packaging/build.sh

examples: $(VENV)/.installed-dev
	$(PY) inspector/resources/examples/make_examples.py

clean:
	rm -rf $(VENV) .fixture-cache build dist
