"""Shared by the tests: they run against the installed package, never the source tree."""

import os
import pathlib

import pytest

import flakery

REPO_ROOT = pathlib.Path(os.environ.get("FLAKERY_REPO_ROOT", pathlib.Path(__file__).parents[2]))


def pytest_report_header() -> str:
    return f"flakery {flakery.__version__} from {pathlib.Path(flakery.__file__).parent}"


@pytest.fixture
def repo_root() -> pathlib.Path:
    return REPO_ROOT


@pytest.fixture
def run_python():
    """Runs code in a fresh interpreter (the process-wide generator reads the environment
    once) with FLAKERY_* variables set as given, and returns its standard output."""
    import subprocess
    import sys

    def run(code: str, **env: str) -> str:
        # FLAKERY_LEASE_DIR is the harness's (run.sh): in a container nothing leases without it.
        environ = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("FLAKERY_") or k == "FLAKERY_LEASE_DIR"
        }
        environ.update(env)
        done = subprocess.run(
            [sys.executable, "-c", code], env=environ, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    return run
