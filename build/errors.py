"""The one exception for a user's mistake (a bad option, a missing or malformed file).

Raised anywhere below a subcommand and turned by ``splice_build.cli.main`` into one line on
stderr, ``splice <command>: <message>``, and exit status 2, with no traceback unless
``--debug`` or ``SPLICE_DEBUG=1`` asks for one. The message must name the file (and line),
the video, the field or the option, because it is all the user sees.
"""

from __future__ import annotations

USAGE_EXIT = 2


class UserError(Exception):
    """A problem with what the user gave us, not a bug: reported as one line, exit 2."""
