"""The names of the kinds this plugin's models run that other plugins declare (no other import).

The open-question kind is the SuperCLUE plugin's: it declares the kind and its example type. The
LLM models name it among the kinds they run and answer such an example by its fields (``turns``,
and ``dimension``/``category`` for a prompt template), read by duck typing, so this plugin
imports no other plugin and works whether or not that one is installed.

``entity_spans`` (clue-tasks-ner, CLUENER2020) and ``kbqa_triple`` (clue-tasks-kgclue, KgCLUE)
are run only through the generic path (:mod:`clue_models_llm.generic`): the task's prompt says how
a question is written and how an answer is read, and this plugin knows nothing of either shape.
"""

OPEN_QUESTION = "open_question"
#: Kinds answered only through the task's own ``Prompt.parse`` (and ``render``/``answer``).
ENTITY_SPANS = "entity_spans"
KBQA_TRIPLE = "kbqa_triple"
GENERIC_KINDS = (ENTITY_SPANS, KBQA_TRIPLE)
