"""Read-only sources: which Markdown files besides `.memory/` a workspace searches (the files
agents already keep: CLAUDE.md, AGENTS.md, rules files, MEMORY.md), and how they are cut into
searchable chunks.

Rule: pure (no file system; `memd.fs.source_files` finds and reads the files these rules name); uses
`core.format` and `core.text` only, never `core.writes`, `core.search` or `core.extract`.
"""
