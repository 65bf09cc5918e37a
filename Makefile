# The two commands: `make demo` (the built-in default) and `make test`.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export TOKENIZERS_PARALLELISM := false
VENV := .venv/bin

.PHONY: setup demo test bench lint typecheck check-teacher
setup:
	@bash scripts/setup.sh

demo: setup
	$(VENV)/hopforge demo --out builds/demo

test: setup
	@bash scripts/setup_verl.sh
	$(VENV)/python -m pytest -q

bench: setup
	$(VENV)/python -m bench

lint: setup
	$(VENV)/ruff check corpus synth filters export flows tests bench

typecheck: setup
	$(VENV)/mypy corpus synth filters export flows

# Opt-in, not in CI: a small whole build against a real model server, and one table of it.
# TEACHER_URL=http://HOST:8000/v1 TEACHER_MODEL=NAME make check-teacher
# make check-teacher ARGS="--serve /path/to/model --vllm-python /path/to/vllm-venv/bin/python"
check-teacher: setup
	$(VENV)/python scripts/check_teacher.py $(ARGS)
