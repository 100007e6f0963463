"""A command agent for the tests: reads one JSON document on stdin, acts on its "mode".

Modes: echo, agent_output, extra_keys, fail, bad_json, silent, env, sleep (write pids, spawn a
grandchild, sleep), orphan (spawn a detached grandchild in the same group, answer, exit).
"""

import json
import os
import subprocess
import sys
import time

data = json.load(sys.stdin)
mode = data.get("mode", "echo")


def spawn_sleeper() -> int:
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return child.pid


if mode == "echo":
    print(json.dumps({"echo": data}))
elif mode == "agent_output":
    print(json.dumps({"output": data["x"] * 2, "cost": 0.5, "tokens": 12, "metrics": {"steps": 3}}))
elif mode == "extra_keys":
    print(json.dumps({"output": 1, "explanation": "not an AgentOutput"}))
elif mode == "bad_output_object":
    print(json.dumps({"output": 1, "cost": "cheap"}))
elif mode == "fail":
    print("partial answer")
    sys.stderr.write("loading model\nTraceback: something broke\n")
    sys.exit(3)
elif mode == "bad_json":
    print("thinking... {'answer': 42}")
elif mode == "silent":
    sys.stderr.write("nothing to say\n")
elif mode == "env":
    print(json.dumps({"var": os.environ.get("ABLATION_TEST_VAR"), "cwd": os.getcwd()}))
elif mode in ("sleep", "orphan"):
    grandchild = spawn_sleeper()
    with open(data["pid_file"] + ".tmp", "w") as fh:
        fh.write(f"{os.getpid()} {os.getpgid(0)} {grandchild}")
    os.replace(data["pid_file"] + ".tmp", data["pid_file"])
    if mode == "sleep":
        time.sleep(60)
    print(json.dumps("done"))
