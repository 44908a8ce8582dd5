"""The default caps on what memd loads and stores; the daemon's `max_file_bytes`,
`max_archive_bytes` and `max_entry_chars` settings (`memd.config`) replace them."""

MAX_FILE_BYTES = 8 * 1024 * 1024
"""The largest category file loaded, or grown by a store, in bytes."""

MAX_ARCHIVE_BYTES = 16 * 1024 * 1024
"""The size past which `.memory/archive.md` is moved aside to a dated file, in bytes."""

MAX_ENTRY_CHARS = 2000
"""The longest memory stored, in characters (after whitespace is normalised)."""
