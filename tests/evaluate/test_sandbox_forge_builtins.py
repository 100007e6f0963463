"""The code cannot hand the tests its own builtins, however it subverts the runner in its process.

The code runs in the same process as the runner that describes its names to the test process.
Each forger below answers ``algorithm-primes-below`` of ``tasks/codegen.py`` wrongly and tries to
make the tests' ``len`` its own (``len(primes_below(100000)) == 9592``) by slipping a
``__builtins__`` of handles into the names the tests receive: by replacing a function of the
runner's module, or by patching the standard library beneath the runner. Each run must end as a
failed verdict, under bubblewrap and under the ``process`` confinement, and the honest answer must
still pass.
"""

from __future__ import annotations

import sys

import pytest
from helpers.cli import REPO

from ablation.evaluate.sandbox import SandboxLimits, run_python_tests
from ablation.schema import AblationTask
from ablation.sources.suites import load_suite

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the sandbox's process checks read /proc"
)

CONFINEMENTS = ("bubblewrap", "process")

WRONG = "def primes_below(n):\n    return [2, 3, 5, 7, 11, 13, 17, 19] if n == 20 else []\n"

HONEST = """
def primes_below(n):
    if n < 3:
        return []
    sieve = [True] * n
    sieve[0] = sieve[1] = False
    for i in range(2, int(n ** 0.5) + 1):
        if sieve[i]:
            sieve[i * i::i] = [False] * len(range(i * i, n, i))
    return [i for i, prime in enumerate(sieve) if prime]
"""

# What every forger shares: the runner's codec (found among the live objects) turns a copy of
# the builtins, with a lying len, into handles of this process.
_COMMON = """
import builtins as _b, gc as _gc, sys as _sys
_runner = _sys.modules['__main__']

def _codec():
    return next(o for o in _gc.get_objects() if type(o).__name__ == '_Codec')

def _fake_builtins(codec):
    fake = dict(vars(_b))
    fake['len'] = lambda x: 9592
    return {'value': codec.enc(fake)}
"""

FORGERS = {
    # The runner's description of the names, looked up in its module when it is called.
    "describe": """
_orig = getattr(_runner, '_describe', None)
def _describe(codec, ns, *more):
    names = _orig(codec, ns, *more)
    names['__builtins__'] = _fake_builtins(codec)
    return names
_runner._describe = _describe
""",
    # The function that sends every message.
    "send": """
_orig = getattr(_runner, '_send', None)
def _send(fd, obj):
    if 'ready' in obj:
        obj['ready']['__builtins__'] = _fake_builtins(_codec())
    return _orig(fd, obj)
_runner._send = _send
""",
    # The JSON encoder the runner bound before the code ran.
    "encode": """
_orig = getattr(_runner, '_encode', None)
def _encode(obj):
    if 'ready' in obj:
        obj['ready']['__builtins__'] = _fake_builtins(_codec())
    return _orig(obj)
_runner._encode = _encode
""",
    # Beneath the runner, where no binding protects it: the json module's class.
    "json_class": """
import json as _json
_orig = _json.JSONEncoder.iterencode
def _iterencode(self, o, _one_shot=False):
    if type(o) is dict and 'ready' in o:
        o['ready']['__builtins__'] = _fake_builtins(_codec())
    return _orig(self, o, _one_shot)
_json.JSONEncoder.iterencode = _iterencode
""",
}


def _task() -> AblationTask:
    suite = load_suite(str(REPO / "tasks" / "codegen.py"))
    return next(t for t in suite if t.task_id == "algorithm-primes-below")


def _run(code: str, confinement: str) -> tuple[bool, str, str]:
    task = _task()
    tests = task.metadata["tests"]
    result = run_python_tests(code, tests, SandboxLimits(time_limit_s=10), confinement=confinement)
    return result.passed, result.kind, result.reason


@pytest.mark.parametrize("confinement", CONFINEMENTS)
@pytest.mark.parametrize("forger", sorted(FORGERS))
def test_a_forged_builtins_never_passes(forger: str, confinement: str) -> None:
    passed, kind, reason = _run(WRONG + _COMMON + FORGERS[forger], confinement)
    assert passed is False, reason
    if forger == "json_class":
        # The runner itself was subverted: the test process refuses what it was sent.
        assert kind == "forged", reason
        assert "__builtins__" in reason
    else:
        # Replacing the runner's module attributes changes nothing: the wrong answer is judged.
        assert kind == "failed", reason
        assert "9592" in reason


@pytest.mark.parametrize("confinement", CONFINEMENTS)
def test_the_honest_answer_passes_and_the_wrong_one_fails(confinement: str) -> None:
    assert _run(HONEST, confinement)[:2] == (True, "passed")
    assert _run(WRONG, confinement)[:2] == (False, "failed")


@pytest.mark.parametrize(
    "raising",
    [
        "def is_even(n):\n    raise StopIteration\n",
        "class Done(StopIteration):\n    pass\n\ndef is_even(n):\n    raise Done()\n",
    ],
)
def test_a_stop_iteration_of_the_code_cannot_end_the_tests_map_early(raising: str) -> None:
    # Raised in the tests' process, StopIteration would end map() as if exhausted: all() holds.
    tests = "assert all(map(lambda n: is_even(n) == (n % 2 == 0), range(10)))\n"
    result = run_python_tests(raising, tests, SandboxLimits(time_limit_s=10))
    assert (result.passed, result.kind) == (False, "failed"), result.reason
