"""The base error for problems a user can fix; the CLI prints these without a traceback."""


class HopforgeError(Exception):
    """A failure with a message that names the problem and the fix."""
