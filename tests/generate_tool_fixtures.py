"""Generate the pydantic-evals and Inspect AI fixtures with the installed tools themselves.

Usage: ``python tests/generate_tool_fixtures.py [OUT_DIR]`` (default ``tests/data/tools``). The tests
call :func:`generate` on a temporary directory too, so the readers are checked on freshly produced
files as well as on the committed copies.

The scenario (:data:`TRUTH`): six samples ``s0``..``s5``. The baseline answers ``s1`` and ``s4``
wrongly; the candidate fixes ``s1`` (an improvement) and breaks ``s2`` (a regression). Inspect runs
two epochs and pydantic-evals ``repeat=2``, so each file holds two runs per sample. The candidate's
first attempt at ``s2`` raises (:data:`FAILURE`): pydantic-evals records it under ``failures``,
Inspect as the sample's ``error`` (``fail_on_error=False``); its second run answers wrongly.

Usage: the pydantic-evals task reports the metrics a logfire-instrumented pydantic-ai run would
(``requests``, ``input_tokens``, ``output_tokens``, ``cache_read_tokens``, with
``increment_eval_metric``); the Inspect model reports a ``ModelUsage`` on every output. In
Inspect the baseline first calls the ``lookup`` tool and then answers; the candidate answers at
once, so the transcripts differ in their tool calls.

Offline token counting: Inspect's ``mockllm/model`` counts tokens with tiktoken, which downloads
its ``o200k_base`` encoding from openaipublic.blob.core.windows.net (unreachable here). This script
registers its own model API, ``offline/<arm>`` (``@modelapi(name="offline")``, class
:class:`OfflineModel`), which answers from :data:`TRUTH` and overrides ``count_text_tokens`` with a
whitespace word count, and which reports that usage on every output, so no encoding is ever loaded.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

#: Which samples each arm answers correctly.
TRUTH = {
    "baseline": {"s0": True, "s1": False, "s2": True, "s3": True, "s4": False, "s5": True},
    "candidate": {"s0": True, "s1": True, "s2": False, "s3": True, "s4": False, "s5": True},
}
SAMPLES = [f"s{i}" for i in range(6)]
#: Directories of this machine that tracebacks name, and what the fixtures say instead.
_PLACES = {str(Path(__file__).resolve().parents[1]): "<repo>", sys.prefix: "<venv>",
           sys.base_prefix: "<python>"}
EPOCHS = 2
#: How much longer the baseline's pydantic-evals task takes: the candidate is clearly faster, so
#: a latency gate on the pair swapped fails (tests/cli/test_ci_fit.py).
BASELINE_DELAY_S = 0.005
#: ``(arm, sample)`` whose first attempt raises, and the message it raises with.
FAILURE = ("candidate", "s2", "upstream model timed out on s2")


class _FirstAttemptFails:
    """Raises ``RuntimeError(FAILURE message)`` on the first call for the failing sample only."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, str]] = set()

    def check(self, arm: str, sample: str) -> None:
        if (arm, sample) == FAILURE[:2] and (arm, sample) not in self.seen:
            self.seen.add((arm, sample))
            raise RuntimeError(FAILURE[2])


def _answer(arm: str, sample: str) -> str:
    number = int(sample[1:])
    return str(number * 2 if TRUTH[arm][sample] else number * 2 + 1)


def pydantic_evals_report(arm: str) -> bytes:
    """``EvaluationReportAdapter.dump_json`` of a ``repeat=2`` evaluation of one arm."""
    from pydantic_evals import Case, Dataset, increment_eval_metric
    from pydantic_evals.evaluators import EqualsExpected
    from pydantic_evals.reporting import EvaluationReportAdapter

    cases = [Case(name=s, inputs=s, expected_output=str(int(s[1:]) * 2)) for s in SAMPLES]
    dataset = Dataset(name="double", cases=cases, evaluators=[EqualsExpected()])
    failing = _FirstAttemptFails()

    def task(sample: str) -> str:
        failing.check(arm, sample)
        if arm == "baseline":
            time.sleep(BASELINE_DELAY_S)
        answer = _answer(arm, sample)
        for name, amount in (("requests", 1), ("input_tokens", 2), ("output_tokens", len(answer)),
                             ("cache_read_tokens", 1)):
            increment_eval_metric(name, amount)
        return answer

    report = dataset.evaluate_sync(task, repeat=EPOCHS, progress=False, name=arm, max_concurrency=1)
    return _scrub(EvaluationReportAdapter.dump_json(report, indent=1).decode()).encode()


def _scrub(text: str) -> str:
    """``text`` with this machine's directories replaced (:data:`_PLACES`, longest first)."""
    for place in sorted(_PLACES, key=len, reverse=True):
        text = text.replace(place, _PLACES[place])
    return text


#: The failure state of the Inspect run under way (each run starts afresh).
_INSPECT_FAILURES = [_FirstAttemptFails()]


def _register_offline_model() -> None:
    from inspect_ai.model import ModelAPI, ModelOutput, ModelUsage, modelapi

    @modelapi(name="offline")
    class OfflineModel(ModelAPI):
        """Answers from :data:`TRUTH` (the arm is the model name); counts tokens as words.

        The baseline calls the ``lookup`` tool before it answers (when the tool is offered);
        the first attempt at the failing sample (:data:`FAILURE`) raises.
        """

        async def generate(self, input: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
            prompt = " ".join(str(m.text) for m in input)
            sample = next(m for m in input if m.role == "user").text.split()[-1]
            _INSPECT_FAILURES[0].check(self.model_name, sample)
            called = any(m.role == "tool" for m in input)
            content = _answer(self.model_name, sample)
            n_in = await self.count_text_tokens(prompt)
            n_out = await self.count_text_tokens(content)
            if self.model_name == "baseline" and tools and not called:
                output = ModelOutput.for_tool_call(self.model_name, "lookup", {"sample": sample},
                                                   tool_call_id=f"call-{sample}")
            else:
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
    from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    if "OfflineModel" not in globals():
        _register_offline_model()

    @tool
    def lookup() -> Any:
        async def execute(sample: str) -> str:
            """Look a sample up.

            Args:
                sample: The sample's id.
            """
            return f"{sample} is number {sample[1:]}"

        return execute

    task = Task(
        dataset=[Sample(id=s, input=f"double {s}", target=str(int(s[1:]) * 2)) for s in SAMPLES],
        solver=[use_tools(lookup()), generate()],
        scorer=match(),
        epochs=EPOCHS,
        name="double",
    )
    # one run per arm, written in both of Inspect's log formats by Inspect itself
    log_dir = out / f"inspect-{arm}"
    _INSPECT_FAILURES[0] = _FirstAttemptFails()
    [log] = inspect_eval(task, model=f"offline/{arm}", log_dir=str(log_dir), log_format="eval",
                         display="none", fail_on_error=False, max_samples=1)
    if log.status != "success":
        raise RuntimeError(f"Inspect run failed: {log.error}")
    [written] = sorted(log_dir.glob("*.eval"))
    scrubbed = EvalLog.model_validate_json(_scrub(read_eval_log(str(written)).model_dump_json()))
    written.unlink()
    log_dir.rmdir()
    paths: dict[str, Path] = {}
    for fmt in ("json", "eval"):
        target = out / f"inspect_{arm}.{fmt}"
        write_eval_log(scrubbed, str(target), format=fmt)  # type: ignore[arg-type]
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
