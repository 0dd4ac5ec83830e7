"""The service's web page behind JupyterHub's OAuth (``jupyterhub.services.auth.HubOAuthenticated``).

Routes under the service's prefix (``JUPYTERHUB_SERVICE_PREFIX``, e.g. ``/services/grader/``):

- ``.``: the page (``view.page``): the signed-in learner's own attempts, or everyone's for an
  instructor (a user named with ``--instructor``, or a hub admin);
- ``feedback/<attempt>``: that attempt's feedback page, only for its learner or an instructor
  (anyone else gets 404, the same answer as for an attempt that does not exist);
- ``api/attempts``: the same rows as JSON (for scripts and tests);
- ``oauth_callback``: the end of the hub's OAuth login (``HubOAuthCallbackHandler``).

Each request reads the queue in a connection of its own (SQLite in WAL mode: the grading loop
writes meanwhile); nothing is cached, so the page is as fresh as the queue.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from jupyterhub.services.auth import HubOAuthCallbackHandler, HubOAuthenticated
from jupyterhub.utils import url_path_join
from tornado import web

from . import held
from .queue import Queue
from .settings import Rules
from .view import CSP, page

__all__ = ["application", "Site"]


class Site:
    """What the handlers need: the queue file, the rules, the course id, who is an instructor."""

    def __init__(self, queue_path: Path, state: Path, rules: Rules, course_id: str, instructors=(), hidden=None):
        self.queue_path, self.state, self.rules, self.course_id = queue_path, state, rules, course_id
        self.instructors, self.hidden = set(instructors), hidden or {}


class _Handler(HubOAuthenticated, web.RequestHandler):
    def initialize(self, site: Site, base: str):
        self.site, self.base = site, base

    def set_default_headers(self):
        self.set_header("Content-Security-Policy", CSP)
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Cache-Control", "no-store")

    def viewer(self) -> tuple[str, bool]:
        user = self.current_user
        name = user["name"]
        return name, bool(user.get("admin")) or name in self.site.instructors

    def rows(self):
        name, instructor = self.viewer()
        queue = Queue(self.site.queue_path)
        try:
            return name, instructor, queue.of(None if instructor else name), queue.queued(), queue.extras()
        finally:
            queue.close()


class PageHandler(_Handler):
    @web.authenticated
    def get(self):
        name, instructor, rows, queued, extras = self.rows()
        self.set_header("Content-Type", "text/html; charset=utf-8")
        site = self.site
        self.write(page(name, rows, queued, site.rules, extras, site.course_id, self.base, instructor, site.hidden))


class ApiHandler(_Handler):
    @web.authenticated
    def get(self):
        name, instructor, rows, queued, _ = self.rows()
        if not instructor:
            rows = [held.shown(a, self.site.hidden.get(a.assignment, set())) for a in rows]
        places = {a.id: i for i, a in enumerate(queued, start=1)}
        keep = ("id", "student", "assignment", "state", "outcome", "number", "score", "max_score", "late_penalty",
                "status", "reason", "questions", "submitted_at", "received_at", "finished_at")  # fmt: skip
        attempts = [{**{k: getattr(a, k) for k in keep}, "place": places.get(a.id)} for a in rows]
        self.set_header("Content-Type", "application/json")
        self.write(json.dumps({"user": name, "instructor": instructor, "waiting": len(queued), "attempts": attempts}))


class FeedbackHandler(_Handler):
    @web.authenticated
    def get(self, attempt_id: str):
        name, instructor = self.viewer()
        queue = Queue(self.site.queue_path)
        try:
            attempt = queue.get(attempt_id)
        finally:
            queue.close()
        kept = self.site.state / "attempts" / attempt_id / "feedback.html"
        if attempt is not None and held.is_held(attempt) and not instructor:  # the page released to the learner
            kept = next((self.site.state / "attempts" / attempt_id / "held").rglob("*.html"), kept.with_suffix(".none"))
        if attempt is None or (attempt.student != name and not instructor) or not kept.is_file():
            raise web.HTTPError(404)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.write(kept.read_bytes())


def application(site: Site, prefix: str | None = None) -> web.Application:
    """The tornado application of the page, under ``prefix`` (default: ``JUPYTERHUB_SERVICE_PREFIX``)."""
    prefix = prefix or os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/")
    args = {"site": site, "base": prefix}
    return web.Application(
        [
            (prefix, PageHandler, args),
            (prefix.rstrip("/") or "/", web.RedirectHandler, {"url": prefix}),  # /services/grader, no slash
            (url_path_join(prefix, "api/attempts"), ApiHandler, args),
            (url_path_join(prefix, r"feedback/([0-9a-f]{1,64})"), FeedbackHandler, args),
            (url_path_join(prefix, "oauth_callback"), HubOAuthCallbackHandler),
        ],
        cookie_secret=os.urandom(32),
    )
