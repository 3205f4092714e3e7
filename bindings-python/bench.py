"""Speed of the installed flakery package (not a test: numbers vary with the machine).

    python bindings-python/bench.py            # after `pip install .`; uuid-utils optional

Prints the cost of one call of flakery.next_id() (and of uuid_utils.uuid7() when that is
installed), and next_ids(1_000_000) in borrow mode against the issue's yardstick,
list(range(10**18, 10**18 + 10**6)), and against the same conversion for ints as large as
today's IDs (which need one more 30-bit digit than 10**18, so CPython allocates more).
"""

import array
import sys
import timeit

import flakery


def per_call_ns(function, number, repeat):
    return min(timeit.repeat(function, number=number, repeat=repeat)) / number * 1e9


def best_ms(function, repeat=11):
    return min(timeit.repeat(function, number=1, repeat=repeat)) * 1e3


def main() -> int:
    print(f"flakery {flakery.__version__}, Python {sys.version.split()[0]}")
    borrow = flakery.Generator(worker_id=1, sequence_policy="borrow")
    calls = [
        ("flakery.next_id() (default generator, 'wait')", flakery.next_id),
        ("Generator(sequence_policy='borrow').next_id()", borrow.next_id),
    ]
    try:
        import uuid_utils

        calls.append(("uuid_utils.uuid7()", uuid_utils.uuid7))
    except ImportError:
        print("(pip install uuid-utils to compare with uuid_utils.uuid7)")
    # 1000 calls fit in a tick's 4096 sequence numbers: this is the cost of a call. A longer
    # run of the 'wait' generator is held to the layout's 4096 IDs per ms (~244 ns each).
    for name, function in calls:
        print(f"{name:50} {per_call_ns(function, 1000, 200):7.1f} ns per call")
    print(f"{'flakery.next_id(), 200,000 in a row':50} {per_call_ns(flakery.next_id, 200_000, 3):7.1f} ns per call"
          " (twitter: at most 4096 IDs per ms and node)")

    n = 1_000_000
    ids = borrow.next_ids(n)
    same_ints = array.array("q", ids)
    yardstick = best_ms(lambda: list(range(10**18, 10**18 + n)))
    large = best_ms(lambda: list(range(2**61, 2**61 + n)))
    conversion = best_ms(same_ints.tolist)
    ours = best_ms(lambda: borrow.next_ids(n))
    print(f"list(range(10**18, 10**18 + 10**6))   {yardstick:7.2f} ms")
    print(f"list(range(2**61, 2**61 + 10**6))     {large:7.2f} ms")
    print(f"array('q', ids).tolist()              {conversion:7.2f} ms  (the conversion alone)")
    print(f"next_ids(1_000_000), borrow           {ours:7.2f} ms")
    print(f"ratio to list(range(10**18, ...))     {ours / yardstick:7.2f}  (the bar: 1.5)")
    print(f"ratio to list(range(2**61, ...))      {ours / large:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
