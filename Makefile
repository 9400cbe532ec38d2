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
# on a VM whose CPU advertised more than it allowed); every x86 CPU variant is built as its own backend
# library and the best one for the CPU is loaded at run time, as llama.cpp's own releases do.
# llama-cpp-python 0.3.36 never loads such backends itself (it has no ggml_backend_load_all call, and ggml
# looks beside the executable), so GGML_BACKEND_DIR compiles their folder into the library: LLAMA_HOME's
# backends/, which the build fills. pip's wheel cache ignores CMAKE_ARGS, so the wheel is built without it,
# under a lock, into LLAMA_HOME (keyed by the version and these flags), and installed from there alone: a
# natively built wheel cached earlier never comes back. tests/models_llm/test_llamacpp_build.py checks it.
# The AMX variant (sapphirerapids) is removed once built: llama.cpp 0.3.36's AMX matmul hands _tile_loadconfig a
# tile config the compiler did not keep (ggml-org/llama.cpp pull request 26954), and its first tilezero died with
# SIGILL on an Intel Xeon VM whose AMX otherwise works. zen4 is the same variant without AMX, and is picked there.
# Removed on every install too, so a cache built before this line loses it as well.
LLAMA_CPP_VERSION := 0.3.36
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON
LLAMA_KEY := $(shell printf '%s' '$(LLAMA_CPP_VERSION) $(LLAMA_CMAKE_ARGS)' | sha256sum | cut -c1-12)
LLAMA_HOME ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/clue-core/llama-cpp-python-$(LLAMA_CPP_VERSION)-$(LLAMA_KEY)
LLAMA_BUILT := $(LLAMA_HOME)/.built
LLAMA_DROPPED := $(LLAMA_HOME)/backends/libggml-cpu-sapphirerapids.so

.PHONY: install demo test lint bench llama-wheel clean

$(DEMO_STAMP): requirements-demo.txt constraints.txt pyproject.toml plugins/*/pyproject.toml examples/*/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c constraints.txt -r requirements-demo.txt
	touch $@

$(LLAMA_BUILT):
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# compiling llama.cpp takes minutes, on every core; .built is written last, so a killed build is redone
	mkdir -p $(LLAMA_HOME) && flock $(LLAMA_HOME)/.lock sh -c 'test -f $@ || { \
	  rm -rf $(LLAMA_HOME)/wheel $(LLAMA_HOME)/backends && \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS) -DGGML_BACKEND_DIR=$(LLAMA_HOME)/backends" \
	  CMAKE_BUILD_PARALLEL_LEVEL=$${CMAKE_BUILD_PARALLEL_LEVEL:-$$(nproc 2>/dev/null || echo 2)} \
	  $(BIN)/python -m pip wheel --quiet --no-deps --no-cache-dir --no-binary llama-cpp-python \
	    -w $(LLAMA_HOME)/wheel llama-cpp-python==$(LLAMA_CPP_VERSION) && \
	  rm -f $(LLAMA_DROPPED) && ls $(LLAMA_HOME)/backends/libggml-cpu-*.so >/dev/null && touch $@; }'

llama-wheel: $(LLAMA_BUILT)

$(DEV_STAMP): $(DEMO_STAMP) requirements-dev.txt $(LLAMA_BUILT) Makefile
	rm -f $(LLAMA_DROPPED)
	$(BIN)/python -m pip install --quiet -c constraints.txt --find-links $(LLAMA_HOME)/wheel --only-binary llama-cpp-python -r requirements-dev.txt
	# replaces a llama-cpp-python installed earlier from another build (a native one)
	$(BIN)/python -m pip install --quiet --no-deps --force-reinstall $(LLAMA_HOME)/wheel/llama_cpp_python-*.whl
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
