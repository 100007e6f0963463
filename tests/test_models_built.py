"""Every model a thread may build first is complete at import.

Pydantic's build on first use (``defer_build=True``) is not thread-safe (pydantic 2.13: the
first instantiations racing in several threads fail with ``PydanticUserError: ... BaseModel
cannot be instantiated directly`` or ``AttributeError: ... __pydantic_core_schema__``). Agents
build :class:`~ablation.schema.AgentOutput` objects in the engine's worker threads, many at
once, so a deferred model turned the first wave of trials into recorded agent errors.

Both checks run in a fresh interpreter: in this one, other tests have built every model already.
"""

from __future__ import annotations

from tests.helpers.cli import fresh_json

#: The one model left to build on first use: only the command line's main thread reads
#: ``[tool.ablation]`` settings, and most projects have none.
DEFERRED = {"ablation.cli.tool_settings.ToolSettings", "ablation.cli.tool_settings._Price"}

_INCOMPLETE = """
import json, pkgutil, importlib, pydantic, ablation
for info in pkgutil.walk_packages(ablation.__path__, "ablation."):
    if not info.name.endswith("__main__"):
        importlib.import_module(info.name)
def walk(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from walk(sub)
models = {f"{m.__module__}.{m.__qualname__}": m for m in walk(pydantic.BaseModel)
          if m.__module__.startswith("ablation")}
print(json.dumps([len(models), sorted(k for k, m in models.items() if not m.__pydantic_complete__)]))
"""

_RACE = """
import json, sys, threading
from ablation import AblationTask, AgentOutput, RubricCriterion
sys.setswitchinterval(1e-6)  # switch threads as often as possible, to make a race likely
threads, errors = 32, []
barrier = threading.Barrier(threads)
def build():
    barrier.wait()
    try:
        AgentOutput(output="x", cost=0.1)
        RubricCriterion(name="r", keywords=("a",))
        AblationTask(task_id="t", input_data="q", expected_output="a")
    except Exception as e:
        errors.append(repr(e))
workers = [threading.Thread(target=build) for _ in range(threads)]
for w in workers: w.start()
for w in workers: w.join()
print(json.dumps(errors))
"""


def test_every_model_but_the_settings_is_built_at_import() -> None:
    count, incomplete = fresh_json(_INCOMPLETE)  # type: ignore[misc]
    assert count > 30  # the walk found the package's models
    assert set(incomplete) == DEFERRED


def test_first_instantiations_racing_in_threads_all_succeed() -> None:
    assert fresh_json(_RACE) == []
