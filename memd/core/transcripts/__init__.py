"""Coding agents' own session transcripts, read as conversation turns (issue 36): a defensive
JSON-lines reader (`lines`) and one module per agent's format (`claude`), each pure: bytes or
parsed objects in, `Turn`s out. Finding the files and following them as they grow is the
shell's work."""
