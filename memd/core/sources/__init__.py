"""Read-only sources: Markdown files agents already keep (CLAUDE.md, AGENTS.md, rules files,
MEMORY.md), cut into searchable chunks.

Rule: uses `core.format` and `core.text` only, never `core.writes`, `core.search` or
`core.extract`.
"""
