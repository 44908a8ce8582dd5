"""Protocol constants that light code needs without importing msgspec (the prompt hook's fast
path); `memd_client.protocol` re-exports them."""

PROTOCOL_VERSION = 1
"""The protocol's major version: a client works only with a daemon of the same one. Additions
that old clients can ignore (new methods, new result fields) keep it."""

DEFAULT_CONTEXT_BUDGET = 800
"""Tokens in a `context` block unless the caller says otherwise."""

CLIENT_VERSION = "0.1.0"
"""This library's version, as its writes report it (`protocol.Writer`); kept equal to
`memd_client.__version__`."""
