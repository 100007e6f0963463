"""Where tasks, agents and results come from: suites and agents by path or module spec, and the
result files of earlier runs (read into the same :class:`~ablation.schema.TaskResult` rows).
"""
