"""Generate the pydantic-evals and Inspect AI fixtures with the installed tools themselves.

Usage: ``python tests/generate_tool_fixtures.py [OUT_DIR]`` (default ``tests/data/tools``). The tests
call :func:`generate` on a temporary directory too, so the readers are checked on freshly produced
files as well as on the committed copies.

The scenario (:data:`TRUTH`): six samples ``s0``..``s5``. The baseline answers ``s1`` and ``s4``
wrongly; the candidate fixes ``s1`` (an improvement) and breaks ``s2`` (a regression). Inspect runs
two epochs and pydantic-evals ``repeat=2``, so each file holds two runs per sample.

Offline token counting: Inspect's ``mockllm/model`` counts tokens with tiktoken, which downloads
its ``o200k_base`` encoding from openaipublic.blob.core.windows.net (unreachable here). This script
registers its own model API, ``offline/<arm>`` (``@modelapi(name="offline")``, class
:class:`OfflineModel`), which answers from :data:`TRUTH` and overrides ``count_text_tokens`` with a
whitespace word count, and which reports that usage on every output, so no encoding is ever loaded.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

#: Which samples each arm answers correctly.
TRUTH = {
    "baseline": {"s0": True, "s1": False, "s2": True, "s3": True, "s4": False, "s5": True},
    "candidate": {"s0": True, "s1": True, "s2": False, "s3": True, "s4": False, "s5": True},
}
SAMPLES = [f"s{i}" for i in range(6)]
EPOCHS = 2


def _answer(arm: str, sample: str) -> str:
    number = int(sample[1:])
    return str(number * 2 if TRUTH[arm][sample] else number * 2 + 1)


def pydantic_evals_report(arm: str) -> bytes:
    """``EvaluationReportAdapter.dump_json`` of a ``repeat=2`` evaluation of one arm."""
    from pydantic_evals import Case, Dataset
    from pydantic_evals.evaluators import EqualsExpected
    from pydantic_evals.reporting import EvaluationReportAdapter

    cases = [Case(name=s, inputs=s, expected_output=str(int(s[1:]) * 2)) for s in SAMPLES]
    dataset = Dataset(name="double", cases=cases, evaluators=[EqualsExpected()])

    def task(sample: str) -> str:
        return _answer(arm, sample)

    report = dataset.evaluate_sync(task, repeat=EPOCHS, progress=False, name=arm)
    return EvaluationReportAdapter.dump_json(report, indent=1)


def _register_offline_model() -> None:
    from inspect_ai.model import ModelAPI, ModelOutput, ModelUsage, modelapi

    @modelapi(name="offline")
    class OfflineModel(ModelAPI):
        """Answers from :data:`TRUTH` (the arm is the model name); counts tokens as words."""

        async def generate(self, input: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
            prompt = " ".join(str(m.text) for m in input)
            sample = prompt.split()[-1]
            content = _answer(self.model_name, sample)
            n_in = await self.count_text_tokens(prompt)
            n_out = await self.count_text_tokens(content)
            output = ModelOutput.from_content(model=self.model_name, content=content)
            output.usage = ModelUsage(input_tokens=n_in, output_tokens=n_out, total_tokens=n_in + n_out)
            return output

        async def count_text_tokens(self, text: str) -> int:
            return len(text.split())

    globals()["OfflineModel"] = OfflineModel


def inspect_logs(arm: str, out: Path) -> dict[str, Path]:
    """Run the Inspect task for one arm; write its ``.json`` and ``.eval`` logs into ``out``."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    if "OfflineModel" not in globals():
        _register_offline_model()
    task = Task(
        dataset=[Sample(id=s, input=f"double {s}", target=str(int(s[1:]) * 2)) for s in SAMPLES],
        solver=generate(),
        scorer=match(),
        epochs=EPOCHS,
        name="double",
    )
    paths: dict[str, Path] = {}
    for fmt in ("json", "eval"):
        log_dir = out / f"inspect-{arm}-{fmt}"
        [log] = inspect_eval(task, model=f"offline/{arm}", log_dir=str(log_dir), log_format=fmt,
                             display="none")
        if log.status != "success":
            raise RuntimeError(f"Inspect run failed: {log.error}")
        [written] = sorted(log_dir.glob(f"*.{fmt}"))
        target = out / f"inspect_{arm}.{fmt}"
        written.replace(target)
        log_dir.rmdir()
        paths[fmt] = target
    return paths


def generate(out: Path) -> dict[str, Path]:
    """Write every fixture into ``out``; returns ``{name: path}``."""
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for arm in ("baseline", "candidate"):
        pe = out / f"pe_{arm}.json"
        pe.write_bytes(pydantic_evals_report(arm))
        paths[f"pe_{arm}"] = pe
        for fmt, path in inspect_logs(arm, out).items():
            paths[f"inspect_{arm}_{fmt}"] = path
    (out / "truth.json").write_text(json.dumps(TRUTH, indent=1) + "\n")
    return paths


if __name__ == "__main__":
    for name, path in generate(Path(sys.argv[1] if len(sys.argv) > 1 else "tests/data/tools")).items():
        print(f"{name}: {path}")
