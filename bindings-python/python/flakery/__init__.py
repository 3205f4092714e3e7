"""flakery: Snowflake-style 64-bit unique IDs, from a Rust core.

    import flakery

    id = flakery.next_id()               # process-wide generator, configured by FLAKERY_*
    parts = flakery.decode(id)           # .timestamp_ms, .datetime, .worker_id, ...
    with flakery.Generator(worker_id=7, sequence_policy="borrow") as generator:
        ids = generator.next_ids(1000)
    with flakery.Client(servers="http://10.0.0.5:8080,http://10.0.0.6:8080") as client:
        id = client.next_id()            # the same calls, IDs from `flakery serve`

See docs/python.md for configuration, errors and fork behaviour, docs/client.md for Client.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Callable, Dict

if TYPE_CHECKING:
    # Python 3.10's typing.ParamSpec; only the type checker reads it (3.9 is supported).
    from typing_extensions import ParamSpec

    _P = ParamSpec("_P")

from ._errors import (
    BadAnswerError,
    TlsFailedError,
    ClockMovedBackwardsError,
    CoordinatorUnavailableError,
    FlakeryError,
    ForkedError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    InvalidLayoutError,
    LeaseLostError,
    ServersUnavailableError,
    TimeExhaustedError,
    UnauthorizedError,
    WorkerIdsExhaustedError,
)
from ._flakery import (
    Capacity,
    Client,
    Decoded,
    Field,
    Generator,
    Layout,
    __version__,
    _after_fork_in_child,
    _doctor_json,
    compose,
    decode,
    default_generator,
    from_base32,
    from_base62,
    next_id,
    next_ids,
    to_base32,
    to_base62,
)

# A child of fork() must not repeat its parent's IDs: tell the core, which then refuses a
# fixed node ID in the child (ForkedError) and leases a leased one anew. The core also
# registers the same handler with pthread_atfork; running both is harmless.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _parsed(report_json: Callable[_P, str]) -> Callable[_P, Dict[str, object]]:
    # The keywords are typed once, by _doctor_json's stub (with Generator's, which pyo3 needs
    # spelled in each signature): doctor() takes exactly those.
    def doctor(*args: _P.args, **options: _P.kwargs) -> Dict[str, object]:
        """The budgets report of docs/doctor.md for these generator options (Generator's
        keywords, converted as it converts them; the rest from the environment) as a dict: its
        "exit_code" is what `flakery doctor` would exit with (0 all well, 1 warnings, 2
        refused), its "findings" each with a fix. No node ID lease is taken."""
        report: Dict[str, object] = json.loads(report_json(*args, **options))
        return report

    return doctor


doctor = _parsed(_doctor_json)


__all__ = [
    "BadAnswerError",
    "TlsFailedError",
    "Capacity",
    "Client",
    "ClockMovedBackwardsError",
    "CoordinatorUnavailableError",
    "Decoded",
    "Field",
    "FlakeryError",
    "ForkedError",
    "Generator",
    "InvalidArgumentError",
    "InvalidArgumentTypeError",
    "InvalidLayoutError",
    "LeaseLostError",
    "Layout",
    "ServersUnavailableError",
    "TimeExhaustedError",
    "UnauthorizedError",
    "WorkerIdsExhaustedError",
    "__version__",
    "compose",
    "decode",
    "default_generator",
    "doctor",
    "from_base32",
    "from_base62",
    "next_id",
    "next_ids",
    "to_base32",
    "to_base62",
]
