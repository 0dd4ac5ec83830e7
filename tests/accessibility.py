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


# axe's color-contrast rule checks every element that holds text, one at a time; on a page of
# highlighted code (thousands of spans) it is 75-85% of axe's time. Two elements whose own text style
# (colour, size, weight, shadow, opacity, whether it is drawn) and whose ancestors' backgrounds and
# opacities all compute the same have the same contrast, so the rule checks the first element of each
# such style and every other rule checks every element. What the style cannot see is a box of another
# branch drawn over the text (axe reads the pixels' stack): the site and the lessons place none on text.
CONTRAST = "color-contrast"
SAMPLE = "data-axe-contrast-sample"
MARK_SAMPLES = """(roots) => {
    const behind = new Map();  // an element -> its and its ancestors' backgrounds, computed once
    const backgrounds = (el) => {
        if (!el) return '';
        if (!behind.has(el)) {
            const t = getComputedStyle(el);
            const own = [t.backgroundColor, t.backgroundImage, t.opacity, t.filter, t.mixBlendMode].join(';');
            behind.set(el, own + '|' + backgrounds(el.parentElement));
        }
        return behind.get(el);
    };
    const style = (el) => {
        const s = getComputedStyle(el);
        return [s.color, s.fontSize, s.fontWeight, s.textShadow, s.opacity, s.visibility,
                el.getClientRects().length > 0, backgrounds(el)].join(';');
    };
    document.querySelectorAll('[SAMPLE]').forEach((el) => el.removeAttribute('SAMPLE'));
    const seen = new Set();
    let marked = 0;
    for (const root of roots.flatMap((r) => Array.from(document.querySelectorAll(r)))) {
        for (const el of [root, ...root.querySelectorAll('*')]) {
            const text = Array.from(el.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
            if (!text) continue;
            const key = style(el);
            if (!seen.has(key)) { seen.add(key); el.setAttribute('SAMPLE', ''); marked += 1; }
        }
    }
    return marked;
}""".replace("SAMPLE", SAMPLE)


def _roots(context) -> list[str] | None:
    """The selectors ``context`` includes (the whole page for None), or None where it excludes."""
    if context is None:
        return ["html"]
    if isinstance(context, str):
        return [context]
    if set(context) == {"include"} and all(len(part) == 1 for part in context["include"]):
        return [part[0] for part in context["include"]]
    return None


def violations(page, context=None) -> list[dict]:
    """axe-core's WCAG 2.0/2.1 A and AA violations on the page as it is now (``context``: a CSS
    selector, or axe's ``{"include": [...], "exclude": [...]}``, to check part of it), each axe's
    dict (``id``, ``impact``, ``help``, ``nodes`` with their ``target`` and ``html``). Colour contrast
    is checked on one element of each text style (``MARK_SAMPLES``) where ``context`` only includes."""
    roots = _roots(context)
    if roots is None:
        return _AXE.run(page, context=context, options=OPTIONS).response["violations"]
    others = dict(OPTIONS, rules={**OPTIONS["rules"], CONTRAST: {"enabled": False}})
    found = _AXE.run(page, context=context, options=others).response["violations"]
    if page.evaluate(MARK_SAMPLES, roots):
        contrast = {"runOnly": {"type": "rule", "values": [CONTRAST]}, "resultTypes": ["violations"]}
        # a sample's own text only: its other descendants out, and the samples among them back in (the
        # deepest of include and exclude decides, in axe)
        samples = {"include": [[f"[{SAMPLE}]"]], "exclude": [[f"[{SAMPLE}] :not([{SAMPLE}])"]]}
        found += _AXE.run(page, context=samples, options=contrast).response["violations"]
    return found


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
