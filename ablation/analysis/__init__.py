"""From trials to a verdict: pairing by task, paired metrics, breakdowns, the report and its gates.

Nothing here runs an agent: a report can be built from stored or loaded results alone.
"""
