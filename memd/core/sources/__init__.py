"""Read-only sources: which Markdown files besides `.memory/` a workspace searches.

Rule: pure (no file system); `memd.fs.sources` finds and reads the files these rules name.
"""
