"""The ``ablation`` command line: argument parsing and wiring only (``main(argv) -> int``)."""

from ablation.cli.main import main, main_entry

__all__ = ["main", "main_entry"]
