"""Watching `.memory/` for outside changes: one inotify instance for every workspace
(`watcher`, its ctypes in `inotify`), and the watchfiles fallback (`watchfiles_watch`). Imports
nothing else of the server."""
