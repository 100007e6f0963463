"""An LLM agent as it is written: a pydantic-ai ``Agent`` with two tools, two prompts compared.

Run from the repository root (needs the ``llm`` extra: ``pip install 'ablation[llm]'``)::

    python examples/llm_agent.py
    ablation run examples/llm_agent.py --baseline examples/llm_agent.py:baseline \\
        --candidate examples/llm_agent.py:candidate --runs 3 --details

A support agent answers "where is my order?". It has two tools: ``lookup_order`` (the order's
status) and ``refund_policy`` (read for cancelled orders). The baseline's prompt says to look
every order up; the candidate's shorter prompt lets the model answer from memory when it "feels
sure", so on most orders it skips the lookup and guesses "shipped", which is wrong for the
delayed and cancelled ones.

Offline: the model is pydantic-ai's ``FunctionModel``, a Python function standing in for the
LLM (no network, no key). It is named ``gpt-4o-mini`` so that its token counts (estimated by
pydantic-ai) are priced by ``genai-prices`` like a real call's. The pydantic-ai ``Agent`` objects
themselves are the agents: ablation runs ``agent.run(input)``, verifies the run's output, and
records its usage (tokens, model requests, tool calls by name) and its messages (the trace).

The report names the tool whose use dropped in its notes, shows tokens, requests, cost and
per-tool calls per arm, and the drill-down of a regressed task shows every run, the input, both
tool sequences with the first divergence and a word diff of the answers. The script exits with
the report's exit code: 2, the candidate's six regressions over three runs each are a
significant regression. Each ``Agent`` is given its arm's name (``name=``), which the report's
title and provenance show (two unnamed agents of one class would both read
``pydantic_ai.agent:Agent``).
"""

from __future__ import annotations

import sys

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ablation import AblationTask, CampaignConfig, run_ablation_campaign
from ablation.render import render

ORDERS = {
    "1001": "shipped", "1002": "shipped", "1003": "delayed", "1004": "shipped",
    "1005": "cancelled", "1006": "shipped", "1007": "shipped", "1008": "delayed",
    "1009": "shipped", "1010": "cancelled", "1011": "shipped", "1012": "shipped",
    "1013": "delayed", "1014": "shipped", "1015": "cancelled", "1016": "shipped",
    "1017": "delayed", "1018": "shipped", "1019": "shipped", "1020": "cancelled",
}  # fmt: skip
#: Orders whose id the candidate's model "feels sure" about (it answers without a lookup).
_SURE = {f"{i}" for i in range(1001, 1017)}

BASELINE_PROMPT = "You are a support agent. Always look the order up before answering."
CANDIDATE_PROMPT = "You are a support agent. Be brief; answer from memory when you are sure."


def _contains_status(output: object, task: AblationTask) -> bool:
    return isinstance(output, str) and str(task.expected_output) in output


tasks = [
    AblationTask(
        task_id=f"order-{order_id}",
        input_data=f"Where is my order {order_id}?",
        expected_output=status,
        verifier=_contains_status,
        category=status,
    )
    for order_id, status in ORDERS.items()
]


def _support_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The stand-in LLM: look up, read the policy for a cancelled order, then answer."""
    question = str(messages[0].parts[-1].content)
    order_id = question.rstrip("?").split()[-1]
    returned = {
        p.tool_name: str(p.content) for m in messages for p in m.parts if isinstance(p, ToolReturnPart)
    }
    if "lookup_order" in returned:
        status = returned["lookup_order"]
        if status == "cancelled" and "refund_policy" not in returned:
            return ModelResponse(parts=[ToolCallPart("refund_policy", {})])
        policy = f" {returned['refund_policy']}" if "refund_policy" in returned else ""
        return ModelResponse(parts=[TextPart(f"Your order {order_id} is {status}.{policy}")])
    if "from memory" in (info.instructions or "") and order_id in _SURE:
        return ModelResponse(parts=[TextPart(f"Your order {order_id} has shipped, it is on its way!")])
    return ModelResponse(parts=[ToolCallPart("lookup_order", {"order_id": order_id})])


def _support_agent(name: str, prompt: str) -> Agent[None, str]:
    agent = Agent(FunctionModel(_support_model, model_name="gpt-4o-mini"), instructions=prompt, name=name)

    @agent.tool_plain
    def lookup_order(order_id: str) -> str:
        """The status of an order."""
        return ORDERS.get(order_id, "unknown")

    @agent.tool_plain
    def refund_policy() -> str:
        """What a customer gets back for a cancelled order."""
        return "You will be refunded within 5 days."

    return agent


baseline = _support_agent("baseline", BASELINE_PROMPT)
candidate = _support_agent("candidate", CANDIDATE_PROMPT)


def main() -> int:
    report = run_ablation_campaign(
        baseline, candidate, tasks, config=CampaignConfig(runs=3, seed=7, n_resamples=2000)
    )
    print(render(report, "terminal", details=True))
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
