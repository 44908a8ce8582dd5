"""Project files memd edits besides `.memory/`: agent instruction files and `.gitignore`.

Rule: uses `core.format` only.
"""
