"""An agent whose exception cannot cross from an isolation worker by pickle.

:class:`Unreachable` is a ``ConnectionError`` (a transient error) whose ``__init__`` wants two
arguments: its pickle holds only the message, so rebuilding it in the parent fails.
"""

from __future__ import annotations

from typing import Any


class Unreachable(ConnectionError):
    """A connection error naming a host and port."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(f"cannot reach {host}:{port}")


def unreachable(x: Any) -> Any:
    """Never reaches its service."""
    raise Unreachable("api.example", 443)
