"""Are the page's routes only those it serves: the prefix without its slash sent to the page, and a
feedback address that is not an attempt's id (a path, a name) not served at all? (The hub's OAuth
in front of them is tested with a real hub in tests/hub/.)"""

import asyncio
from pathlib import Path

from tornado.httpclient import AsyncHTTPClient, HTTPClientError
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

from autograder.grading.service.settings import Rules
from autograder.grading.service.web import Site, application


async def _get(app, path: str):
    [sock] = bind_sockets(0, "127.0.0.1")
    server = HTTPServer(app)
    server.add_sockets([sock])
    try:
        url = f"http://127.0.0.1:{sock.getsockname()[1]}{path}"
        try:
            return await AsyncHTTPClient().fetch(url, follow_redirects=False, raise_error=False)
        except HTTPClientError as error:  # pragma: no cover - raise_error=False returns it
            return error.response
    finally:
        server.stop()


def test_the_prefix_without_its_slash_and_paths_that_are_no_attempt(tmp_path: Path):
    site = Site(tmp_path / "queue.db", tmp_path, Rules(), "c101")
    app = application(site, "/services/grader/")
    redirect = asyncio.run(_get(app, "/services/grader"))
    assert redirect.code == 301 and redirect.headers["Location"] == "/services/grader/"
    for path in ("feedback/..%2f..%2fqueue.db", "feedback/ADA", "feedback/", "queue.db", "../queue.db"):
        assert asyncio.run(_get(app, "/services/grader/" + path)).code == 404, path
