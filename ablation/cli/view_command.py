"""``ablation view [STORE] [--store STORE]``: browse a run store in the browser (the ``view`` extra).

The store is ``STORE`` or ``--store STORE`` (the spelling of ``report``, ``run`` and ``list``), else
the default; both given naming different files is a usage error. ``[tool.ablation]`` is not read:
the viewer shows each campaign as stored.
"""

from __future__ import annotations

import argparse
import errno
import socket

from ablation.cli.options import store_path
from ablation.errors import ConfigError

__all__ = ["run_view"]


def run_view(args: argparse.Namespace) -> int:
    """Open the store read-only and serve the viewer until Ctrl-C (exit 0)."""
    path = store_path(args, "view", settings=False)
    if not path.exists():
        raise ConfigError(f"{path}: no run store here (run a campaign first, or name the store)")
    try:
        from ablation.view import Catalog, create_app, serve
    except ImportError as exc:
        raise ConfigError(
            f"ablation view needs the view extra ({(exc.name or '?').split('.')[0]} is missing): "
            "pip install 'ablation[view]'"
        ) from None
    suite = None
    if args.suite:
        from ablation.sources.suites import open_suite

        suite = {t.task_id: t for t in open_suite(args.suite)}
    catalog = Catalog(path, suite=suite)
    try:
        sock = _bound(args.host, args.port)
        serve(create_app(catalog), host=args.host, port=args.port,
              open_browser=not args.no_browser, sock=sock)  # fmt: skip
    except KeyboardInterrupt:
        pass
    finally:
        catalog.close()
    return 0


def _bound(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port``, or one line naming the flag at fault.

    Raises:
        ConfigError: the address cannot be bound: ``--host`` when it does not resolve or is not
            an address of this machine, else ``--port`` (in use, or reserved to root).
    """
    from ablation.view.server import bind

    try:
        return bind(host, port)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
            raise ConfigError(f"argument --host: cannot listen on {host!r}: {reason}") from None
        raise ConfigError(f"argument --port: cannot listen on port {port} of {host!r}: {reason}") from None
