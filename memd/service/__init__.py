"""`memd service`: memd as a systemd (Linux) or launchd (macOS) user service.

Modules: `install` (the install/uninstall/status commands), `systemd` and `launchd` (each
manager's plans and state), `steps` (carrying a plan out), `daemon_process` (the memd already
serving a socket), `commands` (external commands) and `units` (the pure rendering of the files).

Rule: nothing here imports `memd.server`'s daemon modules, and the daemon imports nothing from
here; the names both need (unit names, the launchd socket name, `<socket>.pid`) are in
`memd.paths`.
"""
