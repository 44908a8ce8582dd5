"""The client library's logger ("memd_client"), imported on first use: a CLI call or a prompt
hook that logs nothing does not pay for importing `logging`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging


def logger() -> logging.Logger:
    """Return the "memd_client" logger."""
    import logging

    return logging.getLogger("memd_client")
