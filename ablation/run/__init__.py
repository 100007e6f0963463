"""Running a campaign: the engine that schedules trials, the campaign that wires engine, store and
analysis together, progress reporting and scale-out executors.
"""
