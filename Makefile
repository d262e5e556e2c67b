# Quick start: `make demo`, then `make test`. Both create the virtual environment on first use.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
# A Python 3.12 interpreter: python3.12 on PATH, else one installed under pyenv.
PYTHON ?= $(shell for p in python3.12 $$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.12*/bin/python3.12 2>/dev/null); do \
	$$p -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null && { echo $$p; break; }; done)

export HF_HUB_OFFLINE ?= 1

.PHONY: env demo test clean-demo

env: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@test -n "$(PYTHON)" || { echo "Python 3.12 not found: install python3.12 (LeRobot 0.6.1 requires it) or set PYTHON=/path/to/python3.12"; exit 1; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	@touch $@

demo: env
	$(VENV)/bin/teledex-demo

test: env
	$(PY) -m pytest -q

clean-demo:
	rm -rf outputs/demo
