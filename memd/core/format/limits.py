"""The default caps on what memd loads and stores, and how long a write waits; the daemon's
`max_file_bytes`, `max_archive_bytes`, `max_entry_chars` and `lock_timeout` settings
(`memd.config`) replace them. Each default has its one home here."""

MAX_FILE_BYTES = 8 * 1024 * 1024
"""The largest category file loaded, or grown by a store, in bytes."""

MAX_ARCHIVE_BYTES = 16 * 1024 * 1024
"""The size past which `.memory/archive.md` is moved aside to a dated file, in bytes."""

MAX_ENTRY_CHARS = 2000
"""The longest memory stored, in characters (after whitespace is normalised)."""

LOCK_TIMEOUT = 10.0
"""How long a write waits for another tool's `.memory/.lock`, in seconds (HackLM's own retries
last 10.5 s); the daemon's `lock_timeout` setting replaces it."""
