"""The `memd` command's exit codes, shared by every verb.

0 success, 1 the daemon answered with an error (or the request failed), 2 usage error, 3 no
daemon is reachable, 4 `memd check` found stale memories.
"""

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_UNREACHABLE, EXIT_STALE = 0, 1, 2, 3, 4
