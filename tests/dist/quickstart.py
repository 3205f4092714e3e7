"""The Python quick start, run against the installed wheel (tests/dist/run.sh)."""

import flakery

a, b = flakery.next_id(), flakery.next_id()
assert 0 < a < b, (a, b)
with flakery.Generator(worker_id=7) as generator:
    ids = generator.next_ids(100)
    assert list(ids) == sorted(set(ids)), "IDs repeat or do not increase"
    assert flakery.decode(ids[-1]).worker_id == 7
try:
    flakery.decode(-1)
except flakery.FlakeryError as error:
    assert error.code == "invalid_argument", error.code
else:
    raise AssertionError("a negative ID was decoded")
print(f"python quickstart {flakery.__version__}: {b} from {flakery.__file__}")
