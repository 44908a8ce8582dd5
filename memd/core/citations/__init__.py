"""Citations: the workspace artifacts a memory's text refers to (paths, symbols, commands,
config keys, environment variables), and whether each still holds in the code as it is now."""
