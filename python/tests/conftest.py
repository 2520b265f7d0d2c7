"""Shared fixtures of the Python module's tests (ctest's test_python, label python).

ctest sets PYTHONPATH to the build's python/ folder, ISSIM_BINARY to the issim executable of
the same build (the command line the module is compared with) and ISSIM_SOURCE_DIR.
"""
import os
import subprocess

import pytest

SOURCE_DIR = os.environ.get(
    "ISSIM_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(__file__))))


def scene_path(name):
    return os.path.join(SOURCE_DIR, "scenes", name + ".lua")


@pytest.fixture(scope="session")
def issim_binary():
    path = os.environ.get("ISSIM_BINARY")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("ISSIM_BINARY (the issim executable) is not set: run through ctest")
    return path


@pytest.fixture
def cli(issim_binary):
    """Runs `issim ARGS...` and returns the CompletedProcess (text)."""

    def run(*args, check=True):
        # The executable's ASan runtime is its own: the interpreter's preload is not for it.
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        return subprocess.run([issim_binary, *args], capture_output=True, text=True,
                              check=check, env=env)

    return run
