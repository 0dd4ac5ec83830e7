"""Grading on submit: a long-running service (``python -m autograder serve --course DIR``) that grades
each submission nbgrader's exchange receives, hands the feedback back through the exchange, and
shows each learner their attempts on a page behind JupyterHub's OAuth.

settings   the attempt rules of each assignment; the exchange as nbgrader's configuration names it
inbound    the exchange's inbound folder read as hostile: complete folders only, their owner, the
           notebooks and secret copied with size limits, the time that counts (the kernel's ctime)
queue      the durable queue (SQLite): each submission once, its outcome, grants, which attempt the
           gradebook holds; fair order per learner
attempts   the rules applied: grade it or not (limit, cooldown, extra attempts), which attempt counts
handout    feedback released by nbgrader's own ``release_feedback`` code; a page for an attempt not graded
loop       the service's loop: receive, decide, collect and grade (``runs.warm``, as ``grade --course``
           does), hand out, reconcile
view       the learner's (or instructor's) page as HTML
web        the page's tornado handlers behind the hub's OAuth

The top of grading's stages: it may import every stage below it (runs, out, store, judge, sandbox,
intake); only the commands (``autograder.commands``) import it.
"""
