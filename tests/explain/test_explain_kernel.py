"""Is the explainer loaded in the kernel that `./course lab` starts, with no set-up cell run?

A learner who opens a lesson and runs a cell below the set-up cell meets a raw
``NameError: name 'torch' is not defined``; the course's kernel (jupyter/kernels/python3, which
`./course lab` puts first on JUPYTER_PATH) loads the explainer itself, so the error is followed by
"run the set-up cell first". Tested as a learner meets it: `./course lab` in a copy of the course, a
notebook session opened through the server's REST API as JupyterLab opens one, and cells executed
over the kernel's websocket.
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.parse
import urllib.request
import uuid

import pytest

from tests.course_lab import base_and_token, course_lab
from tests.files import fresh_jupyter_env
from tests.test_browser import ARTIFACTS, course_copy


@pytest.fixture(scope="module")
def course_server(tmp_path_factory):
    """`./course lab --no-browser --port PORT` in a copy of the course with a fresh Jupyter
    configuration; yields (base URL, token)."""
    tmp = tmp_path_factory.mktemp("course-kernel")
    root = course_copy(tmp / "course")
    env = fresh_jupyter_env(os.environ, tmp)
    env.pop("JUPYTER_PATH", None)
    with course_lab(root, env, ARTIFACTS / "course-kernel.log") as url:
        yield base_and_token(url)


def _api(base: str, token: str, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(
        f"{base}{path}",
        data=None if body is None else json.dumps(body).encode(),
        method="GET" if body is None else "POST",
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


async def _execute(url: str, cells: list[str]) -> list[list[dict]]:
    """Run each cell in the kernel at the websocket ``url``; the iopub messages (msg_type, content)
    each produced, until the kernel was idle again."""
    from tornado.websocket import websocket_connect

    socket = await websocket_connect(url)
    results = []
    for code in cells:
        msg_id = uuid.uuid4().hex
        header = {
            "msg_id": msg_id,
            "msg_type": "execute_request",
            "username": "learner",
            "session": "s",
            "version": "5.3",
        }
        content = {"code": code, "silent": False, "store_history": True, "user_expressions": {}, "allow_stdin": False}
        message = {"header": header, "parent_header": {}, "metadata": {}, "content": content, "channel": "shell"}
        await socket.write_message(json.dumps(message))
        outputs = []
        while True:
            reply = json.loads(await asyncio.wait_for(socket.read_message(), 120))
            if reply.get("parent_header", {}).get("msg_id") != msg_id or reply["channel"] != "iopub":
                continue
            if reply["msg_type"] == "status" and reply["content"]["execution_state"] == "idle":
                break
            outputs.append({"msg_type": reply["msg_type"], **reply["content"]})
        results.append(outputs)
    socket.close()
    return results


def test_a_lesson_without_its_set_up_cell_says_run_the_set_up_cell(course_server):
    """In a lesson opened with `./course lab`, does a cell run before the set-up cell (torch not
    imported) get its NameError followed by the explanation "run the set-up cell first", and an
    autograd error after the set-up cell's own %load_ext one explanation, not two, and no "already
    loaded" line from that %load_ext?"""
    base, token = course_server
    assert _api(base, token, "/api/kernelspecs")["default"] == "python3"
    session = _api(
        base,
        token,
        "/api/sessions",
        {"path": "notebooks/10_hooks.ipynb", "type": "notebook", "name": "", "kernel": {"name": "python3"}},
    )
    kernel = session["kernel"]["id"]
    url = f"{base.replace('http', 'ws', 1)}/api/kernels/{kernel}/channels?token={token}"
    skipped, loaded_again = asyncio.run(
        _execute(url, ["x = torch.ones(2)", "%load_ext autograder\nimport torch\ntorch.ones(2).sum().backward()"])
    )
    error = next(o for o in skipped if o["msg_type"] == "error")
    assert error["ename"] == "NameError" and "torch" in error["evalue"]
    explanations = [o["data"]["text/plain"] for o in skipped if o["msg_type"] == "display_data"]
    assert len(explanations) == 1 and "(setup_not_run)" in explanations[0]
    assert "Run the set-up cell first" in " ".join(explanations[0].split())
    again = [o["data"]["text/plain"] for o in loaded_again if o["msg_type"] == "display_data"]
    assert len(again) == 1 and "(not_built)" in again[0]
    printed = " ".join(o.get("text", "") for o in loaded_again if o["msg_type"] == "stream")
    assert "already loaded" not in printed


def test_in_a_new_notebook_the_explanation_comes_before_pytorchs_frames(course_server):
    """In a notebook of the learner's own (IPython's default tracebacks, with every frame), is a
    known error shown as its last line, then the explanation, with PyTorch's frames folded under it
    (kept, not lost), rather than after thirty lines of torch/_tensor.py? And is the set-up cell run
    a second time silent (no "The autograder extension is already loaded"), while %unload_ext
    still turns the explainer off?"""
    base, token = course_server
    session = _api(
        base,
        token,
        "/api/sessions",
        {"path": "my-work/Untitled.ipynb", "type": "notebook", "name": "", "kernel": {"name": "python3"}},
    )
    url = f"{base.replace('http', 'ws', 1)}/api/kernels/{session['kernel']['id']}/channels?token={token}"
    set_up = "%load_ext autograder\nimport torch"
    error = "torch.tensor([1.0, 2.0]).sum().backward()"
    first, again, failed, _, unexplained = asyncio.run(
        _execute(url, [set_up, set_up, error, "%unload_ext autograder", error])
    )
    printed = " ".join(o.get("text", "") for o in first + again if o["msg_type"] == "stream")
    assert "already loaded" not in printed and printed.strip() == ""
    failed = [o for o in failed if o["msg_type"] in ("error", "display_data", "stream")]
    assert [o["msg_type"] for o in failed] == ["error", "display_data"], failed
    shown = "\n".join(failed[0]["traceback"])
    assert "element 0 of tensors does not require grad" in shown and "_tensor.py" not in shown
    page, text = failed[1]["data"]["text/html"], failed[1]["data"]["text/plain"]
    assert page.index("autograder explains") < page.index("<details><summary>The traceback") < page.index("_tensor.py")
    assert text.index("(not_built)") < text.index("_tensor.py") and "\x1b[" not in text
    # turned off, the error is IPython's own again: every frame, no explanation
    unexplained = [o for o in unexplained if o["msg_type"] in ("error", "display_data", "stream")]
    assert [o["msg_type"] for o in unexplained] == ["error"]
    assert "_tensor.py" in "\n".join(unexplained[0]["traceback"])
