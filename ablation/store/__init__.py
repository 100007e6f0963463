"""The run store: SQLite persistence of campaigns and trials (append, resume, reuse, export).

:mod:`ablation.store.format` is the on-disk format (tables, row types, export lines);
:mod:`ablation.store.run_store` is :class:`RunStore`, which owns the connection and the operations.
"""
