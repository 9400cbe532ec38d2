"""``hf:<folder>`` that is no model: one whole line, said before the run starts."""

from __future__ import annotations

import pytest

from clue_models_hf import loading

from .conftest import invoke


@pytest.mark.slow
def test_an_empty_model_folder_is_one_whole_line_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "home"))
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "out"
    result = invoke("run", "tnews", "--model", f"hf:{empty}", "--sample", "-o", out)
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        f"error: {empty}: not a model directory (no config.json); pass the model/ folder of an earlier run, "
        "a save_pretrained folder or a hub id"]
    assert not out.exists()


def test_a_multi_line_library_error_is_kept_whole_on_one_line(tmp_path):
    error = ValueError("Couldn't instantiate the backend tokenizer from one of: \n(1) a `tokenizers` library "
                       "serialization file, \n(2) a slow tokenizer instance to convert or \n(3) an equivalent slow "
                       "tokenizer class to instantiate and convert. \nYou need to have sentencepiece installed.")
    message = str(loading._explain(str(tmp_path), error))
    assert "\n" not in message
    assert message.endswith("from one of: (1) a `tokenizers` library serialization file, (2) a slow tokenizer "
                            "instance to convert or (3) an equivalent slow tokenizer class to instantiate and "
                            "convert. You need to have sentencepiece installed.")


def test_a_local_path_that_is_a_file_is_called_a_file_not_missing(tmp_path):
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"\0" * 8)
    with pytest.raises(loading.ClueError, match=r"model\.safetensors: a file, not a model directory; pass the model/"):
        loading.check_source(str(weights))
    with pytest.raises(loading.ClueError, match=r"nowhere: no such model directory; pass the model/"):
        loading.check_source(str(tmp_path / "nowhere"))


@pytest.mark.slow
def test_a_model_folder_whose_weights_are_cut_short_names_the_file(demo_run, tmp_path, monkeypatch):
    """safetensors says "Error while deserializing header" but not which file (issue 18 review)."""
    import shutil

    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "home"))
    runs, _ = demo_run
    model = tmp_path / "model"
    shutil.copytree(runs / "afqmc" / "model", model)
    weights = model / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    result = invoke("run", "afqmc", "--model", model, "--no-train", "--sample", "-o", tmp_path / "out")
    assert result.exit_code == 2, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith(f"error: {weights}: not a readable safetensors file (") and "save the model again" in last
    assert not (tmp_path / "out").exists()
