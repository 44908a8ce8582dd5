"""Functional core: pure functions over plain values.

Rule: nothing under `memd.core` does I/O, reads a clock or draws randomness. Time, paths and file
contents come in as arguments; `tests/test_architecture.py` enforces the import allowlist.
"""
