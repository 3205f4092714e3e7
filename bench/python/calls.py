"""A fixed number of calls on one thread, for instruction counts under callgrind
(docs/benchmarks.md, "Instructions per call"):

    FLAKERY_WORKER_ID=1 valgrind --tool=callgrind python bench/python/calls.py next_id 200000

and again with 400000; the difference over 200,000 is the instructions per call, the
interpreter's start-up excluded. `bit_length` times `(1).bit_length()`, a call of a C function
that does nothing, in the same loop: the loop and CPython's call alone.
"""

import sys
from itertools import repeat

import flakery

CALLS = {
    "next_id": flakery.next_id,
    "bit_length": (1).bit_length,
}


def main() -> None:
    which, n = sys.argv[1], int(sys.argv[2])
    call = CALLS[which]
    call()  # the first call makes the process-wide generator
    for _ in repeat(None, n):
        call()


if __name__ == "__main__":
    main()
