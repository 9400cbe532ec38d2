"""The OpenCompass half of ``opencompass_parity.py``: run one of its configs as its own tasks do, per example.

Run by the OpenCompass virtual environment's python (``python opencompass_side.py SPEC.json``), so
it imports nothing of clue-core: only ``opencompass`` 0.5.4 and the transformers/torch under it.
What ``OpenICLInferTask`` + ``OpenICLEvalTask`` do for one dataset, without their runner and
partitioner (which want a cluster or a work-dir tree): the config file of the installed package,
its first dataset entry (the dev one), ``test_range`` ``[0:N]``, its dataset class on the files
under ``spec['root']/data/...`` (the configs' own relative paths, so the process runs there), a
``ZeroRetriever``, the config's PPL or Gen inferencer over ``HuggingFaceBaseModel`` (batch size 1:
no padding), the eval config's ``pred_postprocessor`` and its evaluator's ``score``.

One thing is patched because the installed libraries moved under OpenCompass 0.5.4, not to change
what it computes: ``PreTrainedTokenizerBase.batch_encode_plus`` (removed in transformers 5) is
mapped to ``__call__`` with the same arguments (what it did in transformers 4). Decoding is the
model's generation config (the dequantised folder's asks for no sampling: greedy).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any


def shim() -> None:
    """transformers 5 dropped ``batch_encode_plus``; OpenCompass 0.5.4 calls it with ``__call__``'s arguments."""
    from transformers import PreTrainedTokenizerBase

    if not hasattr(PreTrainedTokenizerBase, "batch_encode_plus"):
        def batch_encode_plus(self: Any, batch: Any, **kwargs: Any) -> Any:
            return self(batch, **kwargs)

        PreTrainedTokenizerBase.batch_encode_plus = batch_encode_plus


def config_file(name: str) -> Path:
    """The installed package's config ``<name>.py`` (configs/datasets/<folder>/<name>.py)."""
    import opencompass

    found = sorted((Path(opencompass.__file__).parent / "configs" / "datasets").glob(f"*/{name}.py"))
    if not found:
        raise SystemExit(f"error: OpenCompass {opencompass.__version__} has no dataset config {name}.py")
    return found[0]


def _number(result: dict[str, Any]) -> float | None:
    """The evaluator's headline figure (``accuracy`` for AccEvaluator, ``score`` for EMEvaluator)."""
    for key in ("accuracy", "score", "acc"):
        if isinstance(result.get(key), (int, float)):
            return float(result[key])
    return next((float(v) for v in result.values() if isinstance(v, (int, float))), None)


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """One config on the prepared data: per-example rows, the evaluator's figure, what was run."""
    shim()
    import opencompass
    from mmengine.config import Config
    from opencompass.models import HuggingFaceBaseModel
    from opencompass.openicl.icl_inferencer import GenInferencer, PPLInferencer
    from opencompass.openicl.icl_retriever import ZeroRetriever
    from opencompass.registry import ICL_EVALUATORS, ICL_PROMPT_TEMPLATES, TEXT_POSTPROCESSORS
    from opencompass.utils import build_dataset_from_cfg

    path = config_file(spec["config"])
    config = Config.fromfile(str(path))
    name = next(key for key in config if key.endswith("_datasets"))
    dataset_cfg = config[name][0].to_dict() if hasattr(config[name][0], "to_dict") else dict(config[name][0])
    dataset_cfg["reader_cfg"] = {**dataset_cfg["reader_cfg"], "test_range": f"[0:{spec['first']}]"}
    os.chdir(spec["root"])  # the configs name their files ./data/CLUE/..., ./data/FewCLUE/...
    dataset = build_dataset_from_cfg(dataset_cfg)
    retriever = ZeroRetriever(dataset)
    infer_cfg = dataset_cfg["infer_cfg"]
    template = ICL_PROMPT_TEMPLATES.build(infer_cfg["prompt_template"])
    model = HuggingFaceBaseModel(path=spec["model"], max_seq_len=spec["max_seq_len"],
                                 model_kwargs={"torch_dtype": "float32"})
    out = Path(spec["out"])
    out.parent.mkdir(parents=True, exist_ok=True)
    written = out.parent / f"{out.stem}-predictions.json"  # the inferencer's own predictions file, as named
    written.unlink(missing_ok=True)
    kind = infer_cfg["inferencer"]["type"]
    kind = kind if isinstance(kind, str) else kind.__name__
    golds = list(retriever.dataset_reader.dataset["test"][retriever.dataset_reader.output_column])
    rows: list[dict[str, Any]] = []
    if "PPL" in kind:
        inferencer = PPLInferencer(model=model, batch_size=1, output_json_filepath=str(out.parent),
                                   output_json_filename=written.name)
        predictions = inferencer.inference(retriever, prompt_template=template)
        saved = json.loads(written.read_text("utf-8"))
        for index, prediction in enumerate(predictions):
            entry = saved[str(index)]
            labels = {key[len("label: "):]: value for key, value in entry.items() if key.startswith("label: ")}
            rows.append({"prediction": str(prediction), "gold": str(golds[index]),
                         "text": labels[str(prediction)]["prompt"],
                         "loss": {value["prompt"]: value["PPL"] for value in labels.values()}})
        scored = [row["prediction"] for row in rows]
        references = [str(gold) for gold in golds]
    else:
        inferencer = GenInferencer(model=model, batch_size=1, max_out_len=spec["max_out_len"],
                                   output_json_filepath=str(out.parent),
                                   output_json_filename=written.name)
        texts = inferencer.inference(retriever, prompt_template=template)
        saved = json.loads(written.read_text("utf-8"))
        post = dict(dataset_cfg.get("eval_cfg", {}).get("pred_postprocessor") or {})
        function = post.pop("type", None)
        function = TEXT_POSTPROCESSORS.get(function) if isinstance(function, str) else function
        scored = [function(text, **post) if function else text for text in texts]
        rows = [{"generation": text, "prediction": answer, "gold": golds[index],
                 "prompt": saved[str(index)].get("origin_prompt")}
                for index, (text, answer) in enumerate(zip(texts, scored))]
        references = golds
    evaluator_cfg = dict(dataset_cfg["eval_cfg"]["evaluator"])
    evaluator_type = evaluator_cfg.pop("type")
    evaluator_type = ICL_EVALUATORS.get(evaluator_type) if isinstance(evaluator_type, str) else evaluator_type
    result = evaluator_type(**evaluator_cfg).score(predictions=scored, references=references)
    return {"config": spec["config"], "config_file": str(path), "opencompass": opencompass.__version__,
            "inferencer": kind, "evaluator": evaluator_type.__name__, "result": result, "figure": _number(result),
            "rows": rows}


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text("utf-8"))
    result = run(spec)
    Path(spec["out"]).write_text(json.dumps(result, ensure_ascii=False, indent=1, default=str), "utf-8")


if __name__ == "__main__":
    main()
