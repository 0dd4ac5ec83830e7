"""axe-core in the browser tests: what WCAG 2.0/2.1 A and AA violations a page has, as Deque's engine
finds them (axe-playwright-python, which carries axe-core and injects it into the page).

Every page a learner or an instructor reads is checked with :func:`violations` and must have no
serious or critical one (:func:`blocking`); the lesser ones are listed in the test's output. The
rules are axe's with the WCAG 2.0 and 2.1 A/AA tags, plus ``label-content-name-mismatch`` (WCAG
2.5.3, label in name), which axe keeps among its experimental rules and so does not run unless named.
"""

from __future__ import annotations

from axe_playwright_python.sync_playwright import Axe

WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
OPTIONS = {
    "runOnly": {"type": "tag", "values": WCAG},
    "rules": {"label-content-name-mismatch": {"enabled": True}},
    "resultTypes": ["violations"],
}
BLOCKING = ("serious", "critical")

_AXE = Axe()


def violations(page, context=None) -> list[dict]:
    """axe-core's WCAG 2.0/2.1 A and AA violations on the page as it is now (``context``: a CSS
    selector, or axe's ``{"include": [...], "exclude": [...]}``, to check part of it), each axe's
    dict (``id``, ``impact``, ``help``, ``nodes`` with their ``target`` and ``html``)."""
    return _AXE.run(page, context=context, options=OPTIONS).response["violations"]


def blocking(found: list[dict]) -> list[dict]:
    """The serious and critical ones among ``found``."""
    return [v for v in found if v.get("impact") in BLOCKING]


def said(found: list[dict], where: str = "") -> list[str]:
    """One line per violation and element: where, the rule, its impact, axe's help, the element."""
    return [
        f"{where}: {v['id']} ({v['impact']}): {v['help']}: {', '.join(map(str, n['target']))} {n['html'][:160]}"
        for v in found
        for n in v["nodes"]
    ]


OPEN_DETAILS = "() => document.querySelectorAll('details').forEach(d => { d.open = true; })"


def audit(page, where: str, context=None) -> tuple[list[str], list[str]]:
    """The page as it is now, its folded ``<details>`` opened (their content is read too), checked:
    ``(serious or critical findings, lesser ones)``, each as :func:`said` lines for ``where``."""
    page.evaluate(OPEN_DETAILS)
    seen = violations(page, context)
    return said(blocking(seen), where), said([v for v in seen if v not in blocking(seen)], where)


def print_lesser(lesser: list[str]) -> None:
    """Show the findings below serious in the test's output (``-s``), where they are read, not hidden."""
    print("\n".join(["Lesser WCAG findings (not failing):", *lesser]) if lesser else "No lesser WCAG findings.")


def by_rule(found: list[dict], where: str = "") -> list[str]:
    """One line per rule: where, the rule, its impact, axe's help, how many elements, the first one."""
    return [
        f"{where}: {v['id']} ({v['impact']}): {v['help']}: {len(v['nodes'])} element(s), e.g. "
        f"{', '.join(map(str, v['nodes'][0]['target']))[:120]}"
        for v in found
    ]
