"""What a feedback page must never hold, read as a browser reads it (tags and attributes, not text)."""

from __future__ import annotations

from html.parser import HTMLParser

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
_ACTIVE = {"script", "iframe", "frame", "object", "embed", "svg", "link", "base", "form", "meta"}


class _Markup(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.csp = False

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if tag == "meta" and values.get("http-equiv") == "Content-Security-Policy":
            self.csp = self.csp or values.get("content") == CSP
        elif (
            tag == "meta" and set(values) <= {"charset", "name", "content"} and values.get("name") in (None, "viewport")
        ):
            pass
        elif tag in _ACTIVE:
            self.problems.append(f"<{tag}>")
        for name, value in attrs:
            value = (value or "").strip().lower()
            if name.startswith("on"):
                self.problems.append(f"{tag} {name}=")
            if "javascript:" in value.replace(" ", ""):
                self.problems.append(f"{tag} {name}=javascript:")
            if name in ("src", "href", "action", "srcset", "poster", "background") and not (
                value.startswith(("data:image/png;base64,", "data:image/jpeg;base64,", "#"))
            ):
                self.problems.append(f"{tag} {name}={value[:40]}")


def page_problems(page: str) -> list[str]:
    """Every script or frame tag, event-handler attribute, ``javascript:`` URL and load from
    anywhere but a PNG/JPEG data URL (or an in-page ``#`` link) in ``page``, and "no
    Content-Security-Policy" when its head lacks the course's policy."""
    parser = _Markup()
    parser.feed(page)
    parser.close()
    return parser.problems + ([] if parser.csp else ["no Content-Security-Policy"])


def hidden_test_lines(assignment: str) -> list[str]:
    """The lines (stripped, over 12 characters) of ``assignment``'s hidden tests in solutions/
    that its release in exercises/ does not also hold (a line such as ``with torch.no_grad():``
    that a visible check has too is no secret)."""
    import nbformat

    from autograder.grading.judge.assemble import HIDDEN_TESTS
    from autograder.lessons import COURSE_ROOT

    def cells(folder):
        return nbformat.read(COURSE_ROOT / folder / assignment / f"{assignment}.ipynb", as_version=4).cells

    shown = {line.strip() for c in cells("exercises") for line in c.source.splitlines()}
    return [
        line.strip()
        for c in cells("solutions")
        for region in HIDDEN_TESTS.findall(c.source)
        for line in region.splitlines()
        if len(line.strip()) > 12 and "HIDDEN TESTS" not in line and line.strip() not in shown
    ]
