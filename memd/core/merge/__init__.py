"""Three-way merges of `.memory/` files, as pure functions of three texts (the git merge driver
`memd merge-file` is their shell).

Rule: uses `core.format`, `core.text` and `core.writes` (memd's own duplicate rule), never
`core.search` or `core.extract`; no I/O.
"""
