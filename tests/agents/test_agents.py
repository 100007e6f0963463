"""Tests of ablation.agents: agent forms, CommandAgent (real subprocesses) and HttpAgent (a real
local HTTP server)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ablation.agents import (
    Agent,
    AgentConnectionError,
    AgentHttpError,
    AgentProcessError,
    AgentTimeoutError,
    CommandAgent,
    HttpAgent,
    as_agent,
)
from ablation.config import RetryPolicy
from ablation.errors import AgentSpecError, ConfigError
from ablation.schema import AgentOutput

DATA = Path(__file__).parents[1] / "data"
PY_AGENT = [sys.executable, "-S", str(DATA / "cmd_agent.py")]  # -S: stdlib only, no site set-up


def group_gone(pgid: int, within_s: float = 10.0) -> bool:
    """True once no process (zombies included) is left in process group ``pgid``.

    Orphaned grandchildren are reaped by init, which may take a moment; hence the polling.
    """
    deadline = time.monotonic() + within_s
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def read_pids(pid_file: Path, within_s: float = 10.0) -> tuple[int, int, int]:
    deadline = time.monotonic() + within_s
    while not pid_file.exists():
        assert time.monotonic() < deadline, "the command agent never wrote its pid file"
        time.sleep(0.02)
    pid, pgid, grandchild = map(int, pid_file.read_text().split())
    return pid, pgid, grandchild


# --------------------------------------------------------------------------- as_agent forms


def test_as_agent_sync_async_object_and_dict() -> None:
    async def fast(x: int) -> int:
        return x + 1

    class WithRun:
        def run(self, x: int) -> int:
            return x * 3

    sync = as_agent(lambda x: x * 2, name="double")
    assert (sync.name, sync.is_async, sync.call_sync(2)) == ("double", False, 4)
    coro = as_agent(fast)
    assert coro.is_async and asyncio.run(coro.call_async(1)) == 2
    assert as_agent(WithRun()).call_sync(2) == 6
    assert as_agent({"run": fast, "name": "d"}).name == "d"
    assert isinstance(as_agent(sync), Agent)


class _AgentClass:
    def run(self, x: int) -> int:
        return x


@pytest.mark.parametrize("bad", ["agents/x.py:v2", 3, None, {"name": "no run"}, _AgentClass])
def test_as_agent_rejects_non_agents(bad: object) -> None:
    with pytest.raises(AgentSpecError):
        as_agent(bad)


# --------------------------------------------------------------------------- CommandAgent


def test_command_agent_round_trip_and_name() -> None:
    agent = CommandAgent(PY_AGENT)
    assert agent.name == "cmd:" + shlex.join(PY_AGENT)
    payload = {"mode": "echo", "x": [1, 2.5, "é"], "nested": {"a": None}}
    assert asyncio.run(agent.run(payload)) == {"echo": payload}


def test_command_agent_is_an_async_agent() -> None:
    wrapped = as_agent(CommandAgent(PY_AGENT, name="py-echo"))
    assert wrapped.is_async and wrapped.name == "py-echo"
    assert asyncio.run(wrapped.call_async({"mode": "echo"})) == {"echo": {"mode": "echo"}}


def test_command_agent_output_object_becomes_agent_output() -> None:
    result = asyncio.run(CommandAgent(PY_AGENT).run({"mode": "agent_output", "x": 21}))
    assert result == AgentOutput(output=42, cost=0.5, tokens=12, metrics={"steps": 3.0})


def test_command_agent_object_with_other_keys_is_the_output() -> None:
    result = asyncio.run(CommandAgent(PY_AGENT).run({"mode": "extra_keys"}))
    assert result == {"output": 1, "explanation": "not an AgentOutput"}


def test_command_agent_invalid_output_object_is_an_error() -> None:
    with pytest.raises(AgentProcessError, match=r"invalid fields: field .cost."):
        asyncio.run(CommandAgent(PY_AGENT).run({"mode": "bad_output_object"}))


def test_command_agent_nonzero_exit_reports_code_and_stderr_tail() -> None:
    with pytest.raises(AgentProcessError) as info:
        asyncio.run(CommandAgent(PY_AGENT).run({"mode": "fail"}))
    err = info.value
    assert isinstance(err, RuntimeError)
    assert err.returncode == 3
    assert "exited with code 3" in str(err)
    assert "something broke" in str(err) and "something broke" in err.stderr
    assert not isinstance(err, RetryPolicy().retry_on)


def test_command_agent_invalid_json_names_it_with_an_excerpt() -> None:
    with pytest.raises(AgentProcessError, match=r"invalid JSON on stdout .*thinking\.\.\."):
        asyncio.run(CommandAgent(PY_AGENT).run({"mode": "bad_json"}))


def test_command_agent_empty_stdout() -> None:
    with pytest.raises(AgentProcessError, match=r"printed nothing on stdout.*nothing to say"):
        asyncio.run(CommandAgent(PY_AGENT).run({"mode": "silent"}))


def test_command_agent_env_and_cwd(tmp_path: Path) -> None:
    agent = CommandAgent(PY_AGENT, cwd=tmp_path, env={"ABLATION_TEST_VAR": "on"})
    result = asyncio.run(agent.run({"mode": "env"}))
    assert result == {"var": "on", "cwd": str(tmp_path.resolve())}


def test_command_agent_missing_program() -> None:
    agent = CommandAgent(["/nonexistent/ablation-agent-binary"])
    with pytest.raises(AgentProcessError, match="cannot start the command"):
        asyncio.run(agent.run({}))


def test_command_agent_rejects_bad_arguments() -> None:
    with pytest.raises(AgentSpecError, match=r"shlex\.split"):
        CommandAgent("python agent.py")  # type: ignore[arg-type]
    with pytest.raises(AgentSpecError):
        CommandAgent([])
    with pytest.raises(ConfigError):
        CommandAgent(PY_AGENT, timeout_s=0)


def test_command_agent_own_timeout_kills_the_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    agent = CommandAgent(PY_AGENT, timeout_s=1.5)
    with pytest.raises(AgentTimeoutError) as info:
        asyncio.run(agent.run({"mode": "sleep", "pid_file": str(pid_file)}))
    assert isinstance(info.value, TimeoutError)
    pid, pgid, grandchild = read_pids(pid_file)
    assert pgid == pid  # start_new_session: the command leads its own group
    assert group_gone(pgid), "processes of the command's group are still alive"
    with pytest.raises(ProcessLookupError):
        os.kill(grandchild, 0)


def test_cancellation_kills_the_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    agent = CommandAgent(PY_AGENT)

    async def scenario() -> None:
        task = asyncio.create_task(agent.run({"mode": "sleep", "pid_file": str(pid_file)}))
        while not pid_file.exists():
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(scenario(), timeout=20))
    _, pgid, _ = read_pids(pid_file)
    assert group_gone(pgid)


def test_engine_style_timeout_kills_the_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    agent = CommandAgent(PY_AGENT)

    async def trial() -> None:
        async with asyncio.timeout(None) as scope:  # what the engine's per-trial timeout does
            run = asyncio.create_task(agent.run({"mode": "sleep", "pid_file": str(pid_file)}))
            while not pid_file.exists():
                await asyncio.sleep(0.02)
            scope.reschedule(asyncio.get_running_loop().time() + 0.1)
            await run

    with pytest.raises(TimeoutError) as info:
        asyncio.run(trial())
    assert not isinstance(info.value, AgentTimeoutError)  # the outer scope's own timeout
    _, pgid, _ = read_pids(pid_file)
    assert group_gone(pgid)


def test_processes_left_in_the_group_after_exit_are_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    result = asyncio.run(CommandAgent(PY_AGENT).run({"mode": "orphan", "pid_file": str(pid_file)}))
    assert result == "done"
    _, pgid, grandchild = read_pids(pid_file)
    assert group_gone(pgid)
    with pytest.raises(ProcessLookupError):
        os.kill(grandchild, 0)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_command_agent() -> None:
    agent = CommandAgent(["node", str(DATA / "cmd_agent.js")])
    assert asyncio.run(agent.run({"x": 21})) == AgentOutput(output=42, cost=0.001)


def test_command_agents_run_concurrently() -> None:
    agent = CommandAgent(PY_AGENT)

    async def many() -> list[object]:
        return await asyncio.gather(*(agent.run({"mode": "echo", "i": i}) for i in range(6)))

    assert asyncio.run(many()) == [{"echo": {"mode": "echo", "i": i}} for i in range(6)]


# --------------------------------------------------------------------------- HttpAgent


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        pass

    def _reply(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        request = json.loads(self.rfile.read(length))
        if self.path == "/echo":
            answer = {"output": request["input"], "cost": 0.25, "tokens": 7}
            self._reply(200, json.dumps(answer).encode())
        elif self.path == "/raw":
            answer = [request, self.headers.get("Authorization")]
            self._reply(200, json.dumps(answer).encode())
        elif self.path == "/500":
            self._reply(503, b"overloaded, try later", "text/plain")
        elif self.path == "/404":
            self._reply(404, b'{"error": "no such route"}')
        elif self.path == "/notjson":
            self._reply(200, b"<html>hello</html>", "text/html")
        elif self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/echo")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/slow":
            time.sleep(1)
            with contextlib.suppress(OSError):  # the client has given up by now
                self._reply(200, b"1")


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ThreadingHTTPServer, str]]:
    for var in ("no_proxy", "NO_PROXY"):
        monkeypatch.setenv(var, "*")  # never route the local test server through a proxy
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    host, port = httpd.server_address[:2]
    try:
        yield httpd, f"http://{host}:{port}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def test_http_agent_round_trip(server: tuple[ThreadingHTTPServer, str]) -> None:
    _, base = server
    agent = HttpAgent(base + "/echo")
    assert agent.name == base + "/echo"
    assert agent.run({"q": [1, 2]}) == AgentOutput(output={"q": [1, 2]}, cost=0.25, tokens=7)
    wrapped = as_agent(agent)
    assert not wrapped.is_async and wrapped.name == agent.name


def test_http_agent_plain_json_and_headers(server: tuple[ThreadingHTTPServer, str]) -> None:
    _, base = server
    agent = HttpAgent(base + "/raw", headers={"Authorization": "Bearer t0ken"}, name="svc")
    assert agent.name == "svc"
    assert agent.run("hi") == [{"input": "hi"}, "Bearer t0ken"]


def test_http_5xx_is_a_retryable_connection_error(server: tuple[ThreadingHTTPServer, str]) -> None:
    _, base = server
    with pytest.raises(AgentConnectionError) as info:
        HttpAgent(base + "/500").run(1)
    assert isinstance(info.value, ConnectionError)
    assert isinstance(info.value, RetryPolicy().retry_on)
    assert info.value.status == 503 and "overloaded" in str(info.value)


def test_http_4xx_is_not_retryable(server: tuple[ThreadingHTTPServer, str]) -> None:
    _, base = server
    with pytest.raises(AgentHttpError) as info:
        HttpAgent(base + "/404").run(1)
    assert info.value.status == 404 and "no such route" in str(info.value)
    assert not isinstance(info.value, RetryPolicy().retry_on)


def test_http_non_json_body_and_redirect(server: tuple[ThreadingHTTPServer, str]) -> None:
    _, base = server
    with pytest.raises(AgentHttpError, match=r"HTTP 200 response is not JSON.*hello"):
        HttpAgent(base + "/notjson").run(1)
    with pytest.raises(AgentHttpError, match="HTTP 302") as info:
        HttpAgent(base + "/redirect").run(1)
    assert info.value.status == 302


def test_http_timeout_is_a_timeout_error(server: tuple[ThreadingHTTPServer, str]) -> None:
    _, base = server
    with pytest.raises(AgentTimeoutError) as info:
        HttpAgent(base + "/slow", timeout_s=0.3).run(1)
    assert isinstance(info.value, TimeoutError)


def test_http_connection_refused_after_shutdown(server: tuple[ThreadingHTTPServer, str]) -> None:
    httpd, base = server
    agent = HttpAgent(base + "/echo")
    assert agent.run(5) == AgentOutput(output=5, cost=0.25, tokens=7)
    httpd.shutdown()
    httpd.server_close()
    with pytest.raises(AgentConnectionError, match="cannot connect") as info:
        agent.run(5)
    assert isinstance(info.value, ConnectionError)
    assert isinstance(info.value, RetryPolicy().retry_on)


@pytest.mark.parametrize("url", ["ftp://example.com/x", "localhost:8000", "http://", "file:///etc"])
def test_http_agent_rejects_non_http_urls(url: str) -> None:
    with pytest.raises(AgentSpecError):
        HttpAgent(url)


def test_http_agent_rejects_bad_timeout() -> None:
    with pytest.raises(ConfigError):
        HttpAgent("http://127.0.0.1:9/", timeout_s=0)
