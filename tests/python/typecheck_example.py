"""A small program that uses flakery's public API; `mypy --strict` must accept it as it is."""

import datetime
from typing import Dict, List

import flakery


def make_ids() -> List[int]:
    first: int = flakery.next_id()
    rest: List[int] = flakery.next_ids(10)
    with flakery.Generator(
        layout="twitter",
        datacenter_id=1,
        worker_id=7,
        sequence_policy="borrow",
        max_borrow_ms=500,
        backwards_tolerance_ms=1000,
        random_sequence_start=False,
    ) as generator:
        rest.extend(generator.next_ids(5))
        rest.append(generator.next_id())
        source: str = generator.source
        assert source == "explicit" and generator.worker_id == 7
    return [first, *rest]


def take_apart(id: int) -> Dict[str, int]:
    parts: flakery.Decoded = flakery.decode(id, layout=flakery.Layout.preset("twitter"))
    when: datetime.datetime = parts.datetime
    assert when.tzinfo is not None
    fields: Dict[str, int] = parts.fields
    fields["timestamp_ms"] = parts.timestamp_ms
    return fields


def build(id: int) -> int:
    parts = flakery.decode(id, "discord")
    return flakery.compose(
        timestamp=parts.datetime,
        datacenter_id=parts.datacenter_id,
        worker_id=parts.worker_id,
        sequence=parts.sequence,
        layout="discord",
    )


def layouts() -> None:
    for name, layout in flakery.Layout.presets().items():
        capacity: flakery.Capacity = layout.capacity
        runs_out: datetime.datetime = layout.exhausted_at
        print(name, str(layout), capacity.ids_per_second, capacity.node_ids, runs_out)
        for field in layout.fields:
            print(field.name, field.kind, field.bits)
    vesta = flakery.Generator(layout="vesta-max-peak", worker_id=1, fields={"method": 2})
    print(vesta.layout.unit, vesta.decode(vesta.next_id()).fields["method"])


def diagnose() -> object:
    report: Dict[str, object] = flakery.doctor(
        layout="twitter", worker_id=7, sequence_policy="borrow", lease_dir=None
    )
    if report["exit_code"] == 2:
        # doctor() is typed with Generator's keywords: a wrong one is an error (--strict
        # reports an ignore that is not needed, as it would be were doctor() untyped).
        flakery.doctor(worker=7)  # type: ignore[call-arg]
    return report["findings"]


def errors() -> str:
    try:
        flakery.decode(-1)
    except flakery.InvalidArgumentError as error:
        code: str = error.code
        return code
    except flakery.FlakeryError:
        raise
    return ""


if __name__ == "__main__":
    ids = make_ids()
    print(take_apart(ids[0]), build(175928847299117063))
    layouts()
    print(errors())


def text_forms(id: int) -> int:
    short: str = flakery.to_base32(id) + flakery.to_base62(str(id))
    back: int = flakery.from_base32(short[:13]) + flakery.from_base62(short[13:])
    return back + flakery.decode(str(id)).worker_id
