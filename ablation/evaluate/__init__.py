"""Evaluation of one trial's output: verifiers (pass/fail), quality scorers, model judges, and
the sandbox that runs agent-written code. The public faces are :mod:`ablation.verifiers` and
:mod:`ablation.quality`.
"""
