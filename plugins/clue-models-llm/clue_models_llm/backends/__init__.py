"""The backends of :mod:`clue_models_llm.backend`, one module each (one line each in ``REGISTRY`` there).

* :mod:`clue_models_llm.backends.transformers`: a causal LM loaded in this process with
  transformers (``llm:<hub id or folder>``, the catalogue, and ``llm-tiny`` built on the spot);
* :mod:`clue_models_llm.backends.openai`: a model behind an OpenAI-compatible server
  (``openai:<served name>``);
* :mod:`clue_models_llm.backends.vllm`: vLLM's offline engine in this process (``vllm:<hub id or folder>``);
* :mod:`clue_models_llm.backends.recorded`: answers recorded elsewhere, read from a file (``answers:<file>``).

Each declares ``BACKEND`` (its model names, settings and class) next to its class. The modules
are named after what they drive; every import in them is absolute, so ``import transformers``
inside ``backends/transformers.py`` is the real package.
"""
