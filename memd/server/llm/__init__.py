"""The daemon's own model (`llm_command`): running the configured command for a prompt
(`command_model`). Imports nothing else of the server."""
