"""Imperative shell: sockets, files, clocks and tasks (anyio)."""
