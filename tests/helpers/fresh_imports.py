"""What a piece of code imports, seen in a fresh interpreter (nothing imported before it)."""

from __future__ import annotations

import ast
import subprocess
import sys


def modules_imported(code: str, prefixes: tuple[str, ...]) -> list[str]:
    """The modules under ``prefixes`` loaded after running ``code`` in a new Python process."""
    report = f"import sys\nprint(sorted(m for m in sys.modules if m.startswith({prefixes!r})))\n"
    out = subprocess.run([sys.executable, "-c", code + "\n" + report], capture_output=True, text=True, check=True)
    return list(ast.literal_eval(out.stdout.strip()))
