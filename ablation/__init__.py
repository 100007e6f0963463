"""ablation: paired ablation campaigns for AI agents.

Run a baseline and a candidate agent on the same task suite, keep every outcome paired by task,
and get an :class:`AblationReport` that names the regressed and improved tasks, tests whether the
difference is real (exact McNemar, score and bootstrap intervals), and applies release gates.

Names are loaded on first use, so ``import ablation`` stays cheap (the command line starts fast).

Example:
    >>> from ablation import AblationTask, run_ablation_campaign
    >>> tasks = [AblationTask(task_id="add", input_data=[2, 3], expected_output=5)]
    >>> report = run_ablation_campaign(lambda x: sum(x), lambda x: x[0] + x[1], tasks)
    >>> report.table.both_pass
    1
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "AblationEngine": "ablation.run.engine",
    "AblationError": "ablation.errors",
    "AblationReport": "ablation.report",
    "AblationTask": "ablation.schema",
    "AgentConnectionError": "ablation.agents.forms",
    "AgentHttpError": "ablation.agents.forms",
    "AgentOutput": "ablation.schema",
    "AgentProcessError": "ablation.agents.forms",
    "AgentSpecError": "ablation.errors",
    "AgentTimeoutError": "ablation.agents.forms",
    "BrokenArm": "ablation.run.failfast",
    "CampaignAborted": "ablation.errors",
    "CampaignConfig": "ablation.config",
    "CampaignRun": "ablation.run.campaign",
    "ConfigError": "ablation.errors",
    "EventLoopBlocked": "ablation.errors",
    "GatePolicy": "ablation.config",
    "InputError": "ablation.errors",
    "NoWorkerLeft": "ablation.errors",
    "OutputTooLarge": "ablation.run.output_caps",
    "Provenance": "ablation.config",
    "ResultReader": "ablation.sources.readers",
    "ResumeMismatchError": "ablation.errors",
    "RetryPolicy": "ablation.config",
    "RubricCriterion": "ablation.schema",
    "RunStore": "ablation.store.run_store",
    "SandboxError": "ablation.evaluate.code_tests",
    "SandboxUnavailable": "ablation.evaluate.code_tests",
    "ScorerError": "ablation.evaluate.quality",
    "SequentialPolicy": "ablation.config",
    "StopCampaign": "ablation.errors",
    "StoreError": "ablation.errors",
    "TaskResult": "ablation.schema",
    "TooManyNames": "ablation.errors",
    "TrialCost": "ablation.outputs",
    "TrialUsage": "ablation.outputs",
    "UnrepresentableOutput": "ablation.run.plain_output",
    "SignalHandlerChanged": "ablation.agents.callables",
    "UnsendableOutput": "ablation.run.isolation",
    "UsageError": "ablation.errors",
    "VerifierError": "ablation.evaluate.verifiers",
    "WorkerDied": "ablation.run.isolation",
    "WrongType": "ablation.errors",
    "compare_results": "ablation.analysis.build",
    "evaluate_gates": "ablation.analysis.gates",
    "load_agent": "ablation.sources.agent_specs",
    "load_results": "ablation.sources.result_files",
    "load_suite": "ablation.sources.suites",
    "register_reader": "ablation.sources.readers",
    "report_from_results": "ablation.analysis.build",
    "run_ablation_campaign": "ablation.run.campaign",
    "run_ablation_campaign_async": "ablation.run.campaign",
}
_SUBMODULES = ("quality", "stats", "verifiers")

__all__ = [
    "AblationEngine",
    "AblationError",
    "AblationReport",
    "AblationTask",
    "AgentConnectionError",
    "AgentHttpError",
    "AgentOutput",
    "AgentProcessError",
    "AgentSpecError",
    "AgentTimeoutError",
    "BrokenArm",
    "CampaignAborted",
    "CampaignConfig",
    "CampaignRun",
    "ConfigError",
    "EventLoopBlocked",
    "GatePolicy",
    "InputError",
    "NoWorkerLeft",
    "OutputTooLarge",
    "Provenance",
    "ResultReader",
    "ResumeMismatchError",
    "RetryPolicy",
    "RubricCriterion",
    "RunStore",
    "SandboxError",
    "SandboxUnavailable",
    "ScorerError",
    "SequentialPolicy",
    "SignalHandlerChanged",
    "StopCampaign",
    "StoreError",
    "TaskResult",
    "TooManyNames",
    "TrialCost",
    "TrialUsage",
    "UnrepresentableOutput",
    "UnsendableOutput",
    "UsageError",
    "VerifierError",
    "WorkerDied",
    "WrongType",
    "compare_results",
    "evaluate_gates",
    "load_agent",
    "load_results",
    "load_suite",
    "quality",
    "register_reader",
    "report_from_results",
    "run_ablation_campaign",
    "run_ablation_campaign_async",
    "stats",
    "verifiers",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"ablation.{name}")
    else:
        raise AttributeError(f"module 'ablation' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from ablation import quality, stats, verifiers
    from ablation.agents.callables import SignalHandlerChanged
    from ablation.agents.forms import (
        AgentConnectionError,
        AgentHttpError,
        AgentProcessError,
        AgentTimeoutError,
    )
    from ablation.analysis.build import compare_results, report_from_results
    from ablation.analysis.gates import evaluate_gates
    from ablation.config import (
        CampaignConfig,
        GatePolicy,
        Provenance,
        RetryPolicy,
        SequentialPolicy,
    )
    from ablation.errors import (
        AblationError,
        AgentSpecError,
        CampaignAborted,
        ConfigError,
        EventLoopBlocked,
        InputError,
        NoWorkerLeft,
        ResumeMismatchError,
        StopCampaign,
        StoreError,
        TooManyNames,
        UsageError,
        WrongType,
    )
    from ablation.evaluate.code_tests import SandboxError, SandboxUnavailable
    from ablation.evaluate.quality import ScorerError
    from ablation.evaluate.verifiers import VerifierError
    from ablation.outputs import TrialCost, TrialUsage
    from ablation.report import AblationReport
    from ablation.run.campaign import (
        CampaignRun,
        run_ablation_campaign,
        run_ablation_campaign_async,
    )
    from ablation.run.engine import AblationEngine
    from ablation.run.failfast import BrokenArm
    from ablation.run.isolation import UnsendableOutput, WorkerDied
    from ablation.run.output_caps import OutputTooLarge
    from ablation.run.plain_output import UnrepresentableOutput
    from ablation.schema import AblationTask, AgentOutput, RubricCriterion, TaskResult
    from ablation.sources.agent_specs import load_agent
    from ablation.sources.readers import ResultReader, register_reader
    from ablation.sources.result_files import load_results
    from ablation.sources.suites import load_suite
    from ablation.store.run_store import RunStore
