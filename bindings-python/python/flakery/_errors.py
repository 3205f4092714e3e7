"""The exceptions of flakery: one class per error code of docs/spec.md#errors.

Every exception flakery raises is a :class:`FlakeryError` whose ``code`` is the
stable string (the same in every binding) and whose message is the Rust core's.
"""

from typing import ClassVar

__all__ = [
    "BadAnswerError",
    "TlsFailedError",
    "ClockMovedBackwardsError",
    "CoordinatorUnavailableError",
    "FlakeryError",
    "ForkedError",
    "InvalidArgumentError",
    "InvalidArgumentTypeError",
    "InvalidLayoutError",
    "LeaseLostError",
    "ServersUnavailableError",
    "TimeExhaustedError",
    "UnauthorizedError",
    "WorkerIdsExhaustedError",
]


class FlakeryError(Exception):
    """Base class of every flakery error; ``code`` is its error code (docs/spec.md#errors)."""

    code: ClassVar[str] = ""


class InvalidLayoutError(FlakeryError, ValueError):
    """A layout spec that cannot be parsed (``invalid_layout``); also a ValueError."""

    code: ClassVar[str] = "invalid_layout"


class InvalidArgumentError(FlakeryError, ValueError):
    """An argument out of range or otherwise wrong (``invalid_argument``); also a ValueError."""

    code: ClassVar[str] = "invalid_argument"


class InvalidArgumentTypeError(InvalidArgumentError, TypeError):
    """An argument of the wrong type, e.g. ``decode("abc")``.

    Its code is ``invalid_argument``, like every argument error, and it is a TypeError as well
    as a ValueError, so ``except TypeError`` and ``except flakery.InvalidArgumentError`` both
    catch it.
    """


class TimeExhaustedError(FlakeryError):
    """The layout's time field has run out, or the clock is before its epoch."""

    code: ClassVar[str] = "time_exhausted"


class ClockMovedBackwardsError(FlakeryError):
    """The clock stepped back by more than ``backwards_tolerance_ms``."""

    code: ClassVar[str] = "clock_moved_backwards"


class LeaseLostError(FlakeryError):
    """The generator cannot prove that its node ID is still its own (or it was closed)."""

    code: ClassVar[str] = "lease_lost"


class CoordinatorUnavailableError(FlakeryError):
    """ZooKeeper could not be reached to lease a node ID."""

    code: ClassVar[str] = "coordinator_unavailable"


class WorkerIdsExhaustedError(FlakeryError):
    """Every node ID of the layout is held by someone else."""

    code: ClassVar[str] = "worker_ids_exhausted"


class ForkedError(FlakeryError):
    """A generator with a fixed node ID was used in a fork's child."""

    code: ClassVar[str] = "forked"


class ServersUnavailableError(FlakeryError):
    """A Client got no IDs from any server within its deadline (each refused, failed, timed
    out or answered 503); the message names each server and what went wrong with it."""

    code: ClassVar[str] = "servers_unavailable"


class UnauthorizedError(FlakeryError):
    """Every server refused a Client's token (401): it is missing or wrong."""

    code: ClassVar[str] = "unauthorized"


class BadAnswerError(FlakeryError):
    """Every server answered a Client with something that is not a batch of IDs (not a
    flakery server, or one of another layout)."""

    code: ClassVar[str] = "bad_answer"


class TlsFailedError(FlakeryError):
    """The TLS handshake with every https:// server of a Client failed: a certificate of an
    unknown CA, expired, for another host name, or the server refused the client's
    certificate. The message names the cause."""

    code: ClassVar[str] = "tls_failed"


# Shown (and pickled) as flakery.ForkedError, where users import them from.
for _cls in (
    FlakeryError,
    InvalidLayoutError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    TimeExhaustedError,
    ClockMovedBackwardsError,
    LeaseLostError,
    CoordinatorUnavailableError,
    WorkerIdsExhaustedError,
    ForkedError,
    ServersUnavailableError,
    UnauthorizedError,
    BadAnswerError,
    TlsFailedError,
):
    _cls.__module__ = "flakery"
del _cls
