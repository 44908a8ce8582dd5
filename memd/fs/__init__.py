"""Blocking file and process I/O: memory files written atomically and durably, the renames that
see what they replace, HackLM's lock file protocol, git's state, process probes, kept indexes.

Rule: nothing here imports anyio or runs an event loop; every function blocks, so the server
calls them in worker threads. Pure decisions come from `memd.core`.
"""
