"""Small suite and agent modules used by the end-to-end tests (loaded by path or imported).

They live at module level so that subprocesses (the command line) and Dask workers can load
them: a Dask worker imports ``helpers.slow_agents`` by name, so the ``tests`` directory must be
on the workers' ``sys.path`` (the tests put it on ``PYTHONPATH``).
"""
