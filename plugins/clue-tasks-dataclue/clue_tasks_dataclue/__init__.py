"""clue-tasks-dataclue: DataCLUE, where the model is fixed and the training data is what improves."""
