"""Write the README's screenshots of every viewer page to ``docs/view/`` (not a test).

Usage: ``python tests/view/screenshots.py`` from the repository root. It builds the demo store
(view_demo.py) in a temporary folder, serves it with ``ablation view`` and photographs each page
in the system Chromium (view_browser.py), 1280 pixels wide, the whole page.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import view_browser  # noqa: E402
import view_demo  # noqa: E402

from ablation.store import RunStore  # noqa: E402

OUT = HERE.parents[1] / "docs" / "view"


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = view_demo.build(Path(tmp) / "runs.db")
        with RunStore(store, read_only=True) as s:
            by = {r.candidate_agent.split(":")[-1]: r for r in s.list_campaigns()
                  if len(r.task_digests) == 14}  # fmt: skip
        a, b = by["candidate_a"], by["candidate_b"]
        suite = Path(HERE / "view_demo.py")
        pages = {
            "campaigns": "/",
            "campaign": f"/campaign/{a.campaign_id}",
            "tasks": f"/campaign/{a.campaign_id}/tasks?show=regressions",
            "task": f"/campaign/{a.campaign_id}/task?id=t05",
            "compare": f"/compare?baseline={a.campaign_id}:candidate&candidate={b.campaign_id}:candidate",
            "history": f"/suite/{a.suite_fingerprint}",
        }
        served = view_browser.served(store, "--suite", f"{suite}:suite")
        with served as url, view_browser.chromium() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            for name, path in pages.items():
                page.goto(url + path)
                page.screenshot(path=str(OUT / f"{name}.png"), full_page=True)
                print(OUT / f"{name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
