"""The exceptions raised by the tilec binding."""

import enum


class Status(enum.IntEnum):
    """tc_status: the result of a C API call."""
    OK = 0
    ERR_ARGUMENT = 1
    ERR_SCHEDULE = 2
    ERR_LOWER = 3
    ERR_COMPILE = 4
    ERR_RUNTIME = 5
    ERR_NO_DEVICE = 6
    ERR_UNSUPPORTED = 7
    ERR_TIMEOUT = 8


class TilecError(Exception):
    """A tilec C API call failed.

    ``message`` is the C library's message (tc_fusion_error or
    tc_kernel_error); ``status`` is the :class:`Status` it returned (None for
    errors of the binding itself, such as a missing library)."""

    def __init__(self, message, status=None):
        self.message = message
        self.status = Status(status) if status is not None else None
        super().__init__(message)

    def __str__(self):
        if self.status is None:
            return self.message
        return "%s: %s" % (self.status.name, self.message)


class LibraryNotFound(TilecError, OSError):
    """libtilec.so could not be found or loaded."""

    def __init__(self, message):
        TilecError.__init__(self, message, None)
