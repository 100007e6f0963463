"""``ablation view``: a local web app to browse a run store (the ``view`` extra).

Pages: the campaigns (filter by suite and agent), one campaign (verdict, gates, headline figures
of its report), its task table (filters, search, sort, paging), one task (every trial of both
arms, a word diff), a comparison of any two stored arms of one suite, and a suite's history. The
store is opened read-only; the pages are server-rendered, escape every stored string and run
under a strict Content-Security-Policy (:mod:`ablation.view.app`).

It needs Starlette and uvicorn (``pip install 'ablation[view]'``); nothing else in the package
imports this room.
"""

from ablation.view.app import create_app
from ablation.view.catalog import Catalog
from ablation.view.server import serve

__all__ = ["Catalog", "create_app", "serve"]
