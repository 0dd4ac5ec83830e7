"""`./course lab` started by a test as a user types it, and stopped cleanly: one context manager for
the browser tests, the explainer kernel's test and the formgrader's test."""

from __future__ import annotations

import re
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

URL_PRINTED = re.compile(r"http://(?:localhost|127\.0\.0\.1):\d+/\S*\?token=\w+")
START_TIMEOUT = 120  # seconds for `./course lab` to print its URL (a cold start on a busy machine)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop(process: subprocess.Popen, shutdown) -> None:
    """Stop a Jupyter server: its own shutdown (which stops the kernels too), else terminate, else kill."""
    try:
        shutdown()
        process.wait(timeout=20)
    except Exception:  # noqa: BLE001 (whatever stopped the clean shutdown, the server must go)
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def course_lab(root: Path, env: dict, log_path: Path, *arguments: str) -> Iterator[str]:
    """Run ``./course lab *arguments --no-browser --port=PORT --ServerApp.port_retries=0`` in
    ``root`` with ``env``, its output in ``log_path``; yield the URL it printed (with its token); shut
    the server down through its API on exit. Fails the test, with the log's end, when the command
    exits or prints no URL within START_TIMEOUT seconds."""
    command = ["./course", "lab", *arguments, "--no-browser", f"--port={free_port()}", "--ServerApp.port_retries=0"]
    with served(command, root, env, log_path) as url:
        yield url


@contextmanager
def served(command: list[str], root: Path, env: dict, log_path: Path) -> Iterator[str]:
    """Run ``command`` (one that starts a Jupyter server: ``./course lab ...``, or ``bash -c LINE``)
    in ``root`` with ``env``, its output in ``log_path``; yield the first URL with a token that it
    printed; shut the server down through its API on exit. Fails the test, with the log's end, when
    the command exits or prints no URL within START_TIMEOUT seconds."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    urls: list[str] = []

    def shutdown():
        parts = urllib.parse.urlsplit(urls[0])  # IndexError without a URL: terminate
        token = urllib.parse.parse_qs(parts.query)["token"][0]
        request = urllib.request.Request(
            f"{parts.scheme}://{parts.netloc}/api/shutdown", method="POST", headers={"Authorization": f"token {token}"}
        )
        urllib.request.urlopen(request, timeout=10).close()

    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not (urls := URL_PRINTED.findall(log_path.read_text())):
            said = log_path.read_text()[-3000:]
            if process.poll() is not None:
                pytest.fail(f"{' '.join(command[:3])} exited with {process.returncode}:\n{said}")
            if time.monotonic() > deadline:
                pytest.fail(f"{' '.join(command[:3])} printed no URL in {START_TIMEOUT} s:\n{said}")
            time.sleep(0.3)
        yield urls[0]
    finally:
        stop(process, shutdown)


def base_and_token(url: str) -> tuple[str, str]:
    """("http://host:port", token) of a URL that `jupyter lab` printed."""
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}", urllib.parse.parse_qs(parts.query)["token"][0]
