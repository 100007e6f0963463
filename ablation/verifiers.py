"""Public face of the verifiers: ``(output, task) -> bool`` checks of a trial's output.

Built-ins: :data:`equals` (the default), :func:`exact`, :func:`numeric`, :func:`regex`,
:func:`contains`, :func:`json_equal` and :func:`code_tests` (agent-written code against the task's
tests, in the sandbox). The implementation lives in :mod:`ablation.evaluate.verifiers` and, for
:func:`code_tests`, :mod:`ablation.evaluate.code_tests`.
"""

from ablation.evaluate.code_tests import CodeTestsVerifier, code_tests, extract_code
from ablation.evaluate.equality import values_equal
from ablation.evaluate.verifiers import (
    BuiltinVerifier,
    Verifier,
    VerifierError,
    check_verdict,
    collect_notes,
    contains,
    default_verifier,
    equals,
    exact,
    json_equal,
    note,
    numeric,
    regex,
    run_verifier,
    verifier_is_async,
)

__all__ = [
    "BuiltinVerifier",
    "CodeTestsVerifier",
    "Verifier",
    "VerifierError",
    "check_verdict",
    "code_tests",
    "collect_notes",
    "contains",
    "default_verifier",
    "equals",
    "exact",
    "extract_code",
    "json_equal",
    "note",
    "numeric",
    "regex",
    "run_verifier",
    "values_equal",
    "verifier_is_async",
]
