"""The open-question kind's name, as this plugin's models answer it (no other import).

The open-question kind is the SuperCLUE plugin's: it declares the kind and its example type. The
LLM models name it among the kinds they run and answer such an example by its fields (``turns``,
and ``dimension``/``category`` for a prompt template), read by duck typing, so this plugin
imports no other plugin and works whether or not that one is installed.
"""

OPEN_QUESTION = "open_question"
