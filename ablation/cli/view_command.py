"""``ablation view [STORE]``: browse a run store in the browser (the ``view`` extra)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ablation.errors import ConfigError

__all__ = ["run_view"]


def run_view(args: argparse.Namespace) -> int:
    """Open the store read-only and serve the viewer until Ctrl-C (exit 0)."""
    from ablation.store.run_store import DEFAULT_STORE_PATH

    path = Path(args.store or DEFAULT_STORE_PATH)
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
        serve(create_app(catalog), host=args.host, port=args.port,
              open_browser=not args.no_browser)  # fmt: skip
    except KeyboardInterrupt:
        pass
    finally:
        catalog.close()
    return 0
