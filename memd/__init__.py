"""memd: one memory daemon for every AI coding agent and editor on a machine.

Importing this package is cheap: it never imports anyio, watchfiles or filelock.
"""

__version__ = "0.1.0"
