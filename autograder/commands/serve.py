"""``python -m autograder serve --course DIR``: grade each submission as the exchange receives it, and
serve the learners' page (run by JupyterHub as a managed service, or beside one)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import traceback
from pathlib import Path
from urllib.parse import urlparse

from . import options


def run(args) -> int:
    from ..grading.names import terminal
    from ..grading.runs.batch import SandboxUnavailable
    from ..grading.sandbox.container import sandbox_problem
    from ..grading.sandbox.limits import Limits
    from ..grading.service.loop import Service
    from ..grading.service.settings import Rules

    try:
        rules = Rules.parse(args.attempts, args.counts, args.cooldown, args.hold_hidden)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if not args.no_sandbox and (problem := sandbox_problem()):
        print(f"error: refusing to grade without a sandbox: {problem}", file=sys.stderr)
        return 2
    if os.geteuid() == 0:
        print("note: running as root; run the service as the grader's account (JupyterHub's service 'user')")
    limits = Limits(
        cell_timeout=args.cell_timeout, total_timeout=args.total_timeout, memory=int(args.memory_limit * 1024**3)
    )
    args.solutions = None  # saved_references reads --solutions: the course's source folder
    try:
        service = Service(
            Path(args.course), rules, Path(args.state) if args.state else None, args.jobs, limits,
            not args.no_sandbox, None, not args.no_check_owner,
        )  # fmt: skip
        if args.references:
            args.solutions = str(service.solutions)
            service.grader.saved = options.saved_references(args)
    except (ValueError, FileNotFoundError) as error:
        print(f"error: {terminal(str(error))}", file=sys.stderr)
        return 2
    stop = threading.Event()
    failed: list[BaseException] = []

    def grade() -> None:
        try:
            service.serve(stop)
        except SandboxUnavailable as error:
            failed.append(error)
            print(f"error: refusing to grade without a sandbox: {error}", file=sys.stderr, flush=True)
        except Exception as error:  # noqa: BLE001 -- said, and the exit status says so; the queue keeps the work
            failed.append(error)
            traceback.print_exc()
        finally:
            stop.set()

    loop = threading.Thread(target=grade, name="grading")
    loop.start()
    try:
        _serve_page(args, service, stop)
    finally:
        stop.set()
        loop.join()
        service.close()
    return (2 if isinstance(failed[0], SandboxUnavailable) else 1) if failed else 0


def _serve_page(args, service, stop: threading.Event) -> None:
    """Serve the page on the service's URL (``JUPYTERHUB_SERVICE_URL``, or ``--port``) until ``stop``
    or SIGTERM/SIGINT; without either, only wait for those."""
    url = os.environ.get("JUPYTERHUB_SERVICE_URL")
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if args.no_page or not (url or args.port) or not os.environ.get("JUPYTERHUB_API_TOKEN"):
        print("no page: not run by a JupyterHub (no JUPYTERHUB_API_TOKEN and JUPYTERHUB_SERVICE_URL)", flush=True)
        try:
            while not stop.wait(1):
                pass
        except KeyboardInterrupt:
            pass
        return
    from tornado.ioloop import IOLoop, PeriodicCallback

    from ..grading.service.web import Site, application

    site = Site(service.queue_path, service.state, service.rules, service.exchange.course_id, args.instructor,
                service.hidden)  # fmt: skip
    parsed = urlparse(url) if url else None
    port = args.port or parsed.port
    host = args.ip or (parsed.hostname if parsed else "127.0.0.1")
    server = application(site).listen(port, host, xheaders=True)
    loop = IOLoop.current()
    PeriodicCallback(lambda: stop.is_set() and loop.stop(), 250).start()
    print(f"page on http://{host}:{port}{os.environ.get('JUPYTERHUB_SERVICE_PREFIX', '/')}", flush=True)
    try:
        loop.start()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


def add(commands) -> None:
    serve = commands.add_parser(
        "serve", help="grade each submission as nbgrader's exchange receives it (a JupyterHub service)"
    )
    serve.add_argument("--course", required=True, help="the nbgrader course folder (nbgrader_config.py: the exchange)")
    serve.add_argument("--state", default=None, help="the service's own folder (default: COURSE/grading-service)")
    for option, metavar, text in (
        ("--attempts", "[ASSIGNMENT=]N", "attempts graded per learner (default: unlimited)"),
        ("--counts", "[ASSIGNMENT=]latest|best", "which graded attempt the gradebook holds (default: latest)"),
        ("--cooldown", "[ASSIGNMENT=]SECONDS", "seconds from one graded attempt to the next (default: 0)"),
    ):
        serve.add_argument(option, action="append", default=[], metavar=metavar, help=text + "; repeatable")
    serve.add_argument(
        "--hold-hidden", action="store_true",
        help="until the due date, show learners the checks they can see; hidden tests' results after it",
    )  # fmt: skip
    serve.add_argument(
        "--instructor", action="append", default=[], metavar="USER",
        help="a hub user who sees every learner's attempts (hub admins do too; repeatable)",
    )  # fmt: skip
    serve.add_argument("--jobs", type=int, default=None, help="parallel sandboxes (default: CPU cores)")
    serve.add_argument("--cell-timeout", type=float, default=60, help="seconds per cell (default 60)")
    serve.add_argument("--total-timeout", type=float, default=300, help="seconds per notebook (default 300)")
    serve.add_argument("--memory-limit", type=float, default=2, help="GiB of memory a submission may add (default 2)")
    serve.add_argument("--references", default=None, help="saved solution records (python -m autograder references)")
    serve.add_argument(
        "--no-check-owner", action="store_true",
        help="grade folders not owned by the learner they name (where learners do not submit as themselves)",
    )  # fmt: skip
    serve.add_argument("--port", type=int, default=None, help="serve the page on this port (default: the hub's URL)")
    serve.add_argument("--ip", default=None, help="the page's address (default: the hub's URL, else 127.0.0.1)")
    serve.add_argument("--no-page", action="store_true", help="grade only; serve no page")
    options.no_sandbox_option(serve)
    serve.set_defaults(run=run)
