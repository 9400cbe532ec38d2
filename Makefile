# make demo: create the environment if missing, install what the demo needs (nothing compiles), run the
#   main job on the bundled samples: fine-tune the offline encoder, evaluate the offline LLM zero-shot,
#   pack the submission, write the report
# make install: everything a developer and CI need (the demo's packages plus the test tools)
# make test: the test suite (what CI runs)
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
DEMO_STAMP := $(VENV)/.demo-stamp
DEV_STAMP := $(VENV)/.dev-stamp
DEMO_TASKS ?= afqmc cmrc2018 chid c3
DEMO_MODEL ?= hf-tiny
DEMO_LLM ?= llm-tiny
DEMO_DIR ?= runs/demo

# llama.cpp built portable: no -march=native (a natively tuned build trapped with an illegal instruction
# on a VM whose CPU advertised more than it allowed), every x86 CPU variant built as its own backend
# library and the best one chosen at run time, as llama.cpp's own releases do. pip's wheel cache ignores
# CMAKE_ARGS, so the wheel is built without it into a folder keyed by the version and these flags, and
# installed from there alone: a natively built wheel cached earlier never comes back.
LLAMA_CPP_VERSION := 0.3.36
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON
LLAMA_KEY := $(shell printf '%s' '$(LLAMA_CPP_VERSION) $(LLAMA_CMAKE_ARGS)' | sha256sum | cut -c1-12)
LLAMA_WHEELS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/clue-core/wheels/llama-cpp-python-$(LLAMA_CPP_VERSION)-$(LLAMA_KEY)
LLAMA_BUILT := $(LLAMA_WHEELS)/.built

.PHONY: install demo test lint bench llama-wheel clean

$(DEMO_STAMP): requirements-demo.txt constraints.txt pyproject.toml plugins/*/pyproject.toml examples/*/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c constraints.txt -r requirements-demo.txt
	touch $@

$(LLAMA_BUILT):
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# compiling llama.cpp takes minutes, on every core; into a private folder renamed when whole, so a
	@# killed build leaves nothing that looks built and two builds at once cannot mix their files
	mkdir -p $(dir $(LLAMA_WHEELS)) && part=$$(mktemp -d $(LLAMA_WHEELS).part-XXXXXX) && \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$${CMAKE_BUILD_PARALLEL_LEVEL:-$$(nproc 2>/dev/null || echo 2)} \
	  $(BIN)/python -m pip wheel --quiet --no-deps --no-cache-dir --no-binary llama-cpp-python \
	  -w $$part llama-cpp-python==$(LLAMA_CPP_VERSION) && touch $$part/.built && \
	  { mv -T $$part $(LLAMA_WHEELS) 2>/dev/null || rm -rf $$part; }
	test -f $@

llama-wheel: $(LLAMA_BUILT)

$(DEV_STAMP): $(DEMO_STAMP) requirements-dev.txt $(LLAMA_BUILT)
	$(BIN)/python -m pip install --quiet -c constraints.txt --find-links $(LLAMA_WHEELS) --only-binary llama-cpp-python -r requirements-dev.txt
	# replaces a llama-cpp-python installed earlier from another build (a native one)
	$(BIN)/python -m pip install --quiet --no-deps --force-reinstall $(LLAMA_WHEELS)/llama_cpp_python-*.whl
	touch $@

install: $(DEV_STAMP)

demo: $(DEMO_STAMP)
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
