"""clue-tasks-ner: CLUENER2020, fine-grained named entities in Chinese news text."""
