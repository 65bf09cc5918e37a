# The two commands: `make demo` (the built-in default) and `make test`.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export TOKENIZERS_PARALLELISM := false
VENV := .venv/bin

.PHONY: setup demo test bench lint typecheck
setup:
	@bash scripts/setup.sh

demo: setup
	$(VENV)/hopforge demo --out builds/demo

test: setup
	$(VENV)/python -m pytest -q

bench: setup
	$(VENV)/python -m bench

lint: setup
	$(VENV)/ruff check corpus synth filters export flows tests bench

typecheck: setup
	$(VENV)/mypy corpus synth filters export flows
