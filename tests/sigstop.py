"""stop_process(pid): SIGSTOP a process and return once it is stopped, not merely signalled.

os.kill(pid, SIGSTOP) returns once the signal is queued: the kernel wakes one thread of the
process to take it, and that thread stops the others only when it runs. Until then a thread
still running answers a request sent after kill() (on a loaded machine, 2 requests in 50).
Stopped is when every thread shows state T (or t) in /proc: nothing answers from then on."""

import os
import signal
import time


def _states(pid):
    states = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                # The state follows the command name, which may hold ") " itself.
                states.append(f.read().rsplit(")", 1)[1].split()[0])
        except FileNotFoundError:
            pass  # a thread that exited: it answers nothing
    return states


def stop_process(pid):
    os.kill(pid, signal.SIGSTOP)
    # A failsafe, not a measure: the stop takes as long as a wait for a core.
    for _ in range(10_000):
        if all(state in "Tt" for state in _states(pid)):
            return
        time.sleep(0.001)
    raise AssertionError(f"pid {pid} did not stop: {_states(pid)}")
