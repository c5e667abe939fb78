"""The ``devshim`` logger.

Levels: ERROR (bad settings, a record that could not be written), WARNING (the default: fallbacks
a user should know about), INFO (one line per NEW call site redirected — never one per call),
DEBUG (INFO plus every attribute patched at activation and the hardware seen).

``configure(level, explicit)`` gives the logger its level. When TORCHDEVICE_LOG_LEVEL was set
(``explicit``) the logger also gets its own stderr handler and stops propagating, so the lines
appear exactly once whatever the program did with the root logger; otherwise records propagate
as usual (and WARNING and above reach stderr through logging's last-resort handler).
"""

from __future__ import annotations

import logging
import sys

__all__ = ["logger", "configure"]

logger = logging.getLogger("devshim")
_handler = None


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time (pytest's capture replaces it)."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


def configure(level: str, explicit: bool) -> None:
    """Sets the logger's level; adds the stderr handler when the level was asked for."""
    global _handler
    logger.setLevel(getattr(logging, level))
    if explicit and _handler is None:
        _handler = _StderrHandler()
        _handler.setFormatter(logging.Formatter("devshim %(levelname)s: %(message)s"))
        logger.addHandler(_handler)
        logger.propagate = False
    elif not explicit and _handler is not None:
        logger.removeHandler(_handler)
        _handler = None
        logger.propagate = True
