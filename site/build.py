"""Build the course's static site: ``.venv/bin/python site/build.py [--out DIR]`` (``./course site``).

The site is made from the committed notebooks as they are (``git show HEAD:``, never answers or
outputs saved in the working tree since), outputs included (nothing is
executed: the outputs are the ones nbval checks), by Sphinx with MyST-NB and sphinx-book-theme.
Sphinx reads a staging copy (``build/site-src/``), never the repository itself, so that
``solutions/`` cannot reach the site; the copy differs from the notebooks only in what a page
needs and a notebook does not:

- every notebook gets, under its title, how to run it (the README's two commands) and a link that
  opens it in a running ``./course lab``;
- an explorer widget, which needs a kernel, is replaced by what it showed when its cell ran (the
  text table or drawing of its output area, saved in the notebook's widget state) and the values
  of its controls; the widget state itself is dropped (rendering it would need ipywidgets'
  scripts from a CDN);
- the explainer's links in outputs (``../notebooks/X.ipynb#anchor``) point to the pages;
- the start page gets the site's table of contents (a hidden toctree, shown in the sidebar);
- generated pages: one per chapter's summary (its lesson's "Summary" section), the explainer and
  the instructors' page (sections of the README, so that the README stays the one source).

Output: ``build/site/`` (``index.html`` leads to the start page), a static folder that any web
server or GitHub Pages serves. Sphinx runs with ``-W --keep-going -n``: a broken cross-reference,
a missing image or any other warning fails the build.
"""

from __future__ import annotations

import argparse
import copy
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's autograder package, whatever the environment holds

from course_site import LAB_URL  # noqa: E402 (site/, this script's folder, is first on sys.path)

from autograder.lessons import anchor_of_cell  # noqa: E402

SITE = Path(__file__).resolve().parent
OUT = REPO / "build" / "site"

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
# The README's sections that make the generated pages, by their headings (each must exist).
EXPLAINER_SECTIONS = ["When autograd raises: the explainer", "Checking your answers (learners)"]
# The instructors' page: the README's sections from the first of these up to the second (not included),
# all but those named last (sections added there later, such as a term's workflow, come along).
INSTRUCTOR_SECTIONS = ("Grading a class (instructors)", "Tests", {"The course as a website"})


def lessons() -> list[Path]:
    """The lesson notebooks in course order (``notebooks/NN_*.ipynb``, the start page excluded)."""
    return sorted(p for p in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb") if not p.name.startswith("00_"))


def exercises() -> list[Path]:
    """The learner versions of the exercises, in course order (``exercises/<id>/<id>.ipynb``)."""
    return sorted(p / f"{p.name}.ipynb" for p in (REPO / "exercises").iterdir() if (p / f"{p.name}.ipynb").is_file())


def committed(path: Path) -> nbformat.NotebookNode:
    """The notebook at ``path`` as committed (``git show HEAD:<path>``), not as saved in the working
    tree: a learner or instructor who tried the course in ``./course lab`` saved answers and outputs
    into ``exercises/`` and ``notebooks/``, and the site must never publish them. Outside a git
    checkout (a tarball, an image without ``.git``), the file as it is.

    Raises:
        FileNotFoundError: ``path`` is neither committed nor a file.
    """
    relpath = path.relative_to(REPO).as_posix()
    shown = subprocess.run(
        ["git", "-C", str(REPO), "show", f"HEAD:{relpath}"], capture_output=True, text=True, check=False
    )
    if shown.returncode != 0:
        if (REPO / ".git").exists() and path.is_file():
            print(f"note: {relpath} is not committed; the site shows the file as it is", file=sys.stderr)
        return nbformat.read(path, as_version=4)
    if path.is_file() and path.read_text(encoding="utf-8") != shown.stdout:
        print(f"note: {relpath} has changes that are not committed; the site shows the committed one", file=sys.stderr)
    return nbformat.reads(shown.stdout, as_version=4)


def title(nb: nbformat.NotebookNode) -> str:
    """The text of a notebook's first heading (markdown marks removed)."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return re.sub(r"[`*]", "", line[2:]).strip()
    raise ValueError("a notebook without a '# ' title")


def run_banner(relpath: str, kind: str) -> str:
    """The MyST note each page starts with: how to run ``relpath`` (relative to the repository)."""
    return (
        ":::{admonition} Run this " + kind + "\n:class: tip run-in-lab\n\n"
        "From a clone of the course's repository, on Linux with Python 3.11 or newer:\n\n"
        "```bash\n"
        "./course lab     # set up, then open JupyterLab at the start page\n"
        "./course test    # set up, then run the whole test suite\n"
        "```\n\n"
        f'<a class="open-in-lab" href="{LAB_URL}{relpath}">Open <code>{relpath}</code> in your '
        "JupyterLab</a> (the JupyterLab that <code>./course lab</code> started, on its default port "
        "8888, in the browser it opened). There, run the cells from the top: what this page shows is "
        "what they print.\n:::"
    )


def _widget_state(nb: nbformat.NotebookNode) -> dict:
    return nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})


def _model_ids(value) -> list[str]:
    """The model ids an ipywidgets ``children`` value refers to (``"IPY_MODEL_<id>"``)."""
    return [v[len("IPY_MODEL_") :] for v in value or [] if isinstance(v, str) and v.startswith("IPY_MODEL_")]


def _controls_and_outputs(state: dict, model_id: str) -> tuple[list[str], list[dict]]:
    """The controls (``description = value``) and the saved outputs of the Output widgets found
    under the widget ``model_id``, depth first."""
    controls, outputs = [], []
    model = state.get(model_id, {})
    fields = model.get("state", {})
    name = model.get("model_name", "")
    if name == "OutputModel":
        outputs.extend(fields.get("outputs", []))
    elif "children" in fields:
        for child in _model_ids(fields["children"]):
            more_controls, more_outputs = _controls_and_outputs(state, child)
            controls += more_controls
            outputs += more_outputs
    elif "value" in fields or "index" in fields:
        label = fields.get("description") or name.removesuffix("Model")
        if "index" in fields:  # a selection widget (Dropdown, SelectionSlider) saves its index
            labels, index = fields.get("_options_labels", []), fields["index"]
            value = labels[index] if isinstance(index, int) and 0 <= index < len(labels) else index
        else:
            value = fields["value"]
        controls.append(f"{label} = {value}")
    return controls, outputs


def static_widgets(nb: nbformat.NotebookNode, relpath: str) -> int:
    """Replace each widget output of ``nb`` by what its output area showed when it was saved and a
    note that names the widget and its controls' values; drop the widget state. Returns how many
    widgets were replaced. A widget whose state was not saved keeps its plain-text form only."""
    state = _widget_state(nb)
    count = 0
    for cell in nb.cells:
        new_outputs = []
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if WIDGET_VIEW not in data:
                new_outputs.append(out)
                continue
            count += 1
            model_id = data[WIDGET_VIEW].get("model_id", "")
            controls, saved = _controls_and_outputs(state, model_id)
            name = data.get("text/plain", "Interactive explorer").split(":")[0]
            shown = f" with {html.escape(', '.join(controls))}" if controls else ""
            note = (
                f'<p class="static-widget"><b>{html.escape(name)}.</b> In JupyterLab this cell shows '
                f'controls: <a href="{LAB_URL}{relpath}">open the notebook</a> and run its cells to use '
                f"them. Here, what it shows when it starts{shown}:</p>"
            )
            new_outputs.append(nbformat.v4.new_output("display_data", data={"text/html": note}))
            new_outputs.extend(nbformat.from_dict(o) for o in saved)
        cell["outputs"] = new_outputs if cell.cell_type == "code" else cell.get("outputs", [])
        if cell.cell_type != "code":
            cell.pop("outputs", None)
    nb.metadata.pop("widgets", None)
    return count


_IPYNB_HREF = re.compile(r'(href=")([^"#:]+)\.ipynb(?:#([^"]*))?"')


def _page_href(found: re.Match, folder: Path) -> str:
    """``X.ipynb#a`` -> ``X.html#a``; ``X.ipynb#cell-id=c`` (JupyterLab's form, which the explainer
    writes) -> ``X.html#a``, ``a`` the heading of that cell in X (JupyterLab's heading ids are
    section ids on the pages too: course_site.jupyter_anchors)."""
    fragment = found[3] or ""
    if fragment.startswith("cell-id="):
        target = (folder / f"{found[2]}.ipynb").resolve()
        fragment = (anchor_of_cell(target, fragment.removeprefix("cell-id=")) if target.is_file() else None) or ""
    return f'{found[1]}{found[2]}.html{"#" + fragment if fragment else ""}"'


def page_links(nb: nbformat.NotebookNode, folder: Path) -> None:
    """Point links in HTML outputs (the explainer's "Lesson:" links) at the pages instead of the
    notebooks (``_page_href``); ``folder``: the notebook's folder, which the links are relative to."""
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            value = out.get("data", {}).get("text/html")
            if isinstance(value, str):
                out["data"]["text/html"] = _IPYNB_HREF.sub(lambda m: _page_href(m, folder), value)


def with_banner(nb: nbformat.NotebookNode, relpath: str, kind: str) -> None:
    """Put the run banner right under the notebook's title (the first cell is split after it)."""
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown")
    head, _, rest = nb.cells[first].source.partition("\n")
    cells = [nbformat.v4.new_markdown_cell(head), nbformat.v4.new_markdown_cell(run_banner(relpath, kind))]
    if rest.strip():
        cells.append(nbformat.v4.new_markdown_cell(rest))
    nb.cells[first : first + 1] = cells


def section(markdown: str, heading: str) -> str:
    """The body of the ``## heading`` section of a markdown text (up to the next ``## ``)."""
    match = re.search(rf"^##+ {re.escape(heading)}\s*$(.*?)(?=^## |\Z)", markdown, re.MULTILINE | re.DOTALL)
    if not match:
        raise SystemExit(f"site: no section '## {heading}' in README.md or a lesson")
    return match[1].strip()


def summary_markdown(nb: nbformat.NotebookNode, name: str) -> str:
    """The "## Summary" section of the lesson ``notebooks/<name>`` (its markdown cells), its
    relative links made relative to ``guide/`` (``#anchor`` points into the lesson)."""
    text = "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    body = section(text, "Summary")

    def relink(m: re.Match) -> str:
        target = m[2]
        if re.match(r"[a-z]+:|/|\.\./", target):
            return m[0]
        return f"{m[1]}../notebooks/{name if target.startswith('#') else ''}{target})"

    return re.sub(r"(\]\()([^)\s]+)\)", relink, body)


def _readme_markdown(headings: list[str]) -> str:
    """The README's sections ``headings``, each as a ``##`` section."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    parts = []
    for heading in headings:
        parts.append(f"## {heading}\n\n{section(readme, heading)}")
    return "\n\n".join(parts)


def explainer_page() -> str:
    """The explainer's page: the README's sections on it and the kinds of errors it knows."""
    from autograder.kinds.table import KINDS
    from autograder.lessons import lesson

    rows = ["| family | kind | taught in |", "|---|---|---|"]
    for name, kind in KINDS.items():
        if isinstance(kind.lesson, tuple):
            # An empty MyST link gets the section's title; Sphinx (-n) checks that it exists.
            notebook, _, anchor = lesson(*kind.lesson).partition("#")
            chapter = int(Path(notebook).name[:2])
            where = f"Lesson {chapter}: [](../{notebook}{'#' + anchor if anchor else ''})"
        elif kind.lesson:
            where = f"<{kind.lesson}>"
        else:
            where = ""
        rows.append(f"| {kind.family} | `{name}` | {where} |")
    return (
        "# The explainer: autograd errors explained\n\n"
        + run_banner("notebooks/00_start.ipynb", "course")
        + "\n\n"
        + _readme_markdown(EXPLAINER_SECTIONS)
        + "\n\n## The kinds it knows\n\nEach kind is recognised on PyTorch's own message "
        "(`autograder/kinds/table.py`); its explanation links to the section that teaches it.\n\n"
        + "\n".join(rows)
        + "\n"
    )


def instructor_sections() -> list[str]:
    """The headings of the README's sections that make the instructors' page, in order."""
    first, end, left_out = INSTRUCTOR_SECTIONS
    headings = re.findall(r"^## (.+?)\s*$", (REPO / "README.md").read_text(encoding="utf-8"), re.MULTILINE)
    if first not in headings or end not in headings:
        raise SystemExit(f"site: README.md has no section '## {first}' or '## {end}'")
    return [h for h in headings[headings.index(first) : headings.index(end)] if h not in left_out]


def instructor_page() -> str:
    """The instructors' page: how grading works, the threat table, serving a class (README)."""
    return (
        "# For instructors: grading and serving a class\n\n"
        + run_banner("notebooks/00_start.ipynb", "course")
        + "\n\n"
        + _readme_markdown(instructor_sections())
        + "\n"
    )


def _toctree(caption: str, entries: list[str]) -> str:
    return "```{toctree}\n:hidden:\n:caption: " + caption + "\n\n" + "\n".join(entries) + "\n```"


def stage(staging: Path) -> dict[str, int]:
    """Write the site's sources into ``staging`` (emptied first). Returns counts for the log."""
    if staging.exists():
        shutil.rmtree(staging)
    (staging / "notebooks").mkdir(parents=True)
    (staging / "guide").mkdir()
    shutil.copytree(REPO / "assets", staging / "assets")
    widgets = 0
    summaries = []
    for path in [REPO / "notebooks" / "00_start.ipynb", *lessons()]:
        relpath = path.relative_to(REPO).as_posix()
        nb = committed(path)
        original = copy.deepcopy(nb)
        widgets += static_widgets(nb, relpath)
        page_links(nb, path.parent)
        with_banner(nb, relpath, "page" if path.name.startswith("00_") else "lesson")
        if path.name.startswith("00_"):
            toc = [
                _toctree("Lessons", [f"{p.stem}" for p in lessons()]),
                _toctree("Exercises", [f"../exercises/{p.parent.name}/{p.stem}" for p in exercises()]),
                _toctree("About the course", ["../guide/summaries", "../guide/explainer", "../guide/instructors"]),
            ]
            nb.cells.append(nbformat.v4.new_markdown_cell("\n\n".join(toc)))
        else:
            chapter = int(path.name[:2])
            summaries.append((chapter, path, title(original), summary_markdown(original, path.name)))
        nbformat.write(nb, staging / relpath)
    for path in exercises():
        relpath = path.relative_to(REPO).as_posix()
        nb = committed(path)
        with_banner(nb, relpath, "exercise")
        (staging / relpath).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, staging / relpath)
    exercise_of = {int(re.match(r"ex(\d+)", p.name)[1]): p for p in exercises()}
    index = [
        "# Chapter summaries\n",
        run_banner("notebooks/00_start.ipynb", "course") + "\n",
        "What each chapter shows, in a few lines; each links to its lesson.\n",
    ]
    names = []
    for chapter, path, lesson_title, body in summaries:
        name = f"summary_{chapter:02d}"
        names.append(name)
        exercise = exercise_of.get(chapter)
        practise = (
            f" and practise it in [Exercise {chapter}](../exercises/{exercise.parent.name}/{exercise.name})"
            if exercise
            else ""
        )
        page = (
            f"# Summary of chapter {chapter}: {lesson_title.split('·', 1)[-1].strip()}\n\n"
            + run_banner(path.relative_to(REPO).as_posix(), "lesson")
            + f"\n\nRead the whole of [Lesson {chapter}](../notebooks/{path.name}){practise}.\n\n{body}\n"
        )
        (staging / "guide" / f"{name}.md").write_text(page, encoding="utf-8")
        index.append(f"- [{lesson_title}]({name}.md)")
    index.append("\n" + "```{toctree}\n:hidden:\n\n" + "\n".join(names) + "\n```\n")
    (staging / "guide" / "summaries.md").write_text("\n".join(index), encoding="utf-8")
    (staging / "guide" / "explainer.md").write_text(explainer_page(), encoding="utf-8")
    (staging / "guide" / "instructors.md").write_text(instructor_page(), encoding="utf-8")
    return {"lessons": len(summaries), "exercises": len(exercise_of), "widgets": widgets}


REDIRECT = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="0; url=notebooks/00_start.html">
<title>The PyTorch autograd graph, hands on</title></head>
<body><p><a href="notebooks/00_start.html">The PyTorch autograd graph, hands on: start here</a></p></body></html>
"""


def build(out: Path = OUT, jobs: str = "1") -> float:
    """Stage the sources into ``<out>-src`` and run Sphinx into ``out`` (both emptied first; its
    cache in ``<out>-doctrees``). Returns the seconds taken. Raises SystemExit with Sphinx's exit
    status when the build fails (any warning fails it)."""
    start = time.monotonic()
    staging = out.with_name(out.name + "-src")
    counts = stage(staging)
    if out.exists():
        shutil.rmtree(out)
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-c", str(SITE), "-W", "--keep-going", "-n", "-q"]
    command += ["-j", jobs, "-d", str(out.with_name(out.name + "-doctrees")), str(staging), str(out)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    status = subprocess.run(command, cwd=REPO, env=env).returncode
    if status:
        raise SystemExit(status)
    (out / "index.html").write_text(REDIRECT, encoding="utf-8")
    (out / ".nojekyll").write_text("", encoding="utf-8")  # GitHub Pages: serve _static/ as it is
    seconds = time.monotonic() - start
    print(f"site: {json.dumps(counts)} -> {out}/index.html in {seconds:.0f} s")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="output folder (default: build/site)")
    parser.add_argument("--jobs", default="1", help="Sphinx's -j (default 1; 'auto' = all cores)")
    args = parser.parse_args(argv)
    build(args.out.resolve(), jobs=args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
