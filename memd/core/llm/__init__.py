"""The model's second opinion, as pure functions: the prompts memd sends (`prompts`) and the
deterministic parsers of the small JSON answers it accepts (`answers`). Where the model runs
(`llm_command`, MCP sampling) and when it is asked live in the shell."""
