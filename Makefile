# make demo: create the environment if missing, install, run the main job on the bundled samples:
#   fine-tune the offline encoder, evaluate the offline LLM zero-shot, pack the submission, write the report
# make test: the test suite (what CI runs)
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DEMO_TASKS ?= afqmc cmrc2018 chid c3
DEMO_MODEL ?= hf-tiny
DEMO_LLM ?= llm-tiny
DEMO_DIR ?= runs/demo

.PHONY: install demo test lint bench clean

$(STAMP): requirements-dev.txt constraints.txt pyproject.toml plugins/*/pyproject.toml examples/*/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# llama-cpp-python compiles llama.cpp when no wheel is cached: on every core, not one
	CMAKE_BUILD_PARALLEL_LEVEL=$${CMAKE_BUILD_PARALLEL_LEVEL:-$$(nproc 2>/dev/null || echo 2)} $(BIN)/python -m pip install --quiet -c constraints.txt -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/clue-core run $(DEMO_TASKS) --model $(DEMO_MODEL) --sample --output-dir $(DEMO_DIR)/$(DEMO_MODEL) --overwrite
	$(BIN)/clue-core run $(DEMO_TASKS) --model $(DEMO_LLM) --sample --output-dir $(DEMO_DIR)/$(DEMO_LLM) --overwrite
	$(BIN)/clue-core submit $(DEMO_DIR)/$(DEMO_MODEL) -o $(DEMO_DIR)/submission.zip --force
	$(BIN)/clue-core report $(DEMO_DIR)/$(DEMO_MODEL) $(DEMO_DIR)/$(DEMO_LLM) -o $(DEMO_DIR)/report

test: install
	$(BIN)/pytest

lint: install
	$(BIN)/ruff check .

bench: install
	$(BIN)/python benchmarks/cli_startup.py

clean:
	rm -rf $(VENV) runs .pytest_cache .ruff_cache
