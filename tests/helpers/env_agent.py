"""A ``cmd:`` agent that records the names of the environment variables it was given.

Usage: ``cmd:python env_agent.py OUT``: reads the task input (``{"n": N}``) on stdin, writes the
sorted variable names as a JSON list to ``OUT`` and answers ``3 * N`` on stdout.
"""

import json
import os
import sys

task = json.load(sys.stdin)
with open(sys.argv[1], "w", encoding="utf-8") as fh:
    json.dump(sorted(os.environ), fh)
print(json.dumps(3 * task["n"]))
