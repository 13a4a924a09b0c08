"""Helpers the test modules share: paths, processes, wire checks, vectors, strategies.

Test modules import from here and never from one another or from a ``conftest.py``.
"""
