"""The temporary folders a submission may write to (``/tmp``, ``/dev/shm``), emptied after each notebook
through descriptors (no path length, depth or mode a submission left stops it), and what a submission
left there that emptying could not take back (:func:`residue`: a reason to replace the container).
Run inside the fork server (:mod:`.forkserver`), and by the grader without the sandbox."""

from __future__ import annotations

import os
import stat

__all__ = ["TEMPORARY", "empty", "empty_temporary", "remove_entry", "residue", "temporary_use", "note_baseline"]

# Inside bubblewrap /tmp is the sandbox's own; without it (--no-sandbox) it is the machine's.
_SANDBOXED = os.environ.get("AUTOGRADER_SANDBOX") == "bwrap"

# What a submission may write to, emptied after each; and what is there that the server keeps: the
# course's checkout and venv, bound read-only under /tmp (their mount points).
TEMPORARY = ("/tmp", "/dev/shm")
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _kept(folder: str, entry: str) -> bool:
    path = os.path.join(folder, entry)
    keep = [p for p in os.environ.get("AUTOGRADER_READ_ONLY", "").split(os.pathsep) if p]
    return any(p == path or p.startswith(path + "/") for p in keep)


def empty_temporary(folder: str) -> None:
    """Remove everything in ``folder`` but what the server keeps, whatever modes a submission left."""
    try:
        os.chmod(folder, 0o1777)  # a submission may have taken the write bit off its /tmp
    except OSError:
        pass
    empty(folder, lambda entry: _kept(folder, entry))


def empty(folder: str, kept=lambda entry: False) -> None:
    """Remove every entry of ``folder`` (but those ``kept`` names) with :func:`remove_entry`."""
    try:
        fd = os.open(folder, _FOLDER)
    except OSError:
        return
    try:
        for entry in os.listdir(fd):
            if not kept(entry):
                remove_entry(fd, entry)
    finally:
        os.close(fd)


def remove_entry(parent: int, name: str) -> None:
    """Remove ``name`` from the folder open as descriptor ``parent``: a file, or a folder and all in
    it, bottom-up, giving each folder back its owner's rights first (a folder without x or w bits
    cannot be emptied). Works through descriptors, one folder open at a time, never by path: no path
    length (ENAMETOOLONG past 4,096 characters) or depth stops it. Run when no submission process is
    left (nothing moves folders meanwhile). Never raises."""
    try:
        if not _is_folder(parent, name):
            os.unlink(name, dir_fd=parent)
            return
        _chmod_at(parent, name)
        fd = os.open(name, _FOLDER, dir_fd=parent)
    except OSError:
        return
    stack = [(name, _files_removed(fd))]  # per open level: its name and the subfolders left in it
    try:
        while stack:
            pending = stack[-1][1]
            if pending:
                sub = pending.pop()
                _chmod_at(fd, sub)
                try:
                    child = os.open(sub, _FOLDER, dir_fd=fd)
                except OSError:
                    continue
                os.close(fd)
                fd = child
                stack.append((sub, _files_removed(fd)))
            else:
                done = stack.pop()[0]
                up = os.open("..", _FOLDER, dir_fd=fd)
                os.close(fd)
                fd = up
                try:
                    os.rmdir(done, dir_fd=fd)
                except OSError:
                    pass
    except OSError:
        pass
    finally:
        os.close(fd)


def _is_folder(parent: int, name: str) -> bool:
    return stat.S_ISDIR(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)


def _chmod_at(parent: int, name: str) -> None:
    try:
        os.chmod(name, 0o700, dir_fd=parent)  # a folder (checked, and nothing runs that could swap it)
    except OSError:
        pass


def _files_removed(fd: int) -> list[str]:
    """Unlink every entry of the folder open as ``fd`` that is not a folder; its subfolders' names."""
    folders = []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.name)
                else:
                    try:
                        os.unlink(entry.name, dir_fd=fd)
                    except OSError:
                        pass
    except OSError:
        pass
    return folders


def residue() -> list[str]:
    """What a submission left in the temporary folders after they were emptied: ``["/tmp"]`` when
    an entry is still there (one the server does not keep), or more blocks or inodes are in use
    than when serving began (:func:`temporary_use`). Each is a reason to replace the container."""
    found = []
    for folder, used in temporary_use().items():
        try:
            left = [e for e in os.listdir(folder) if not _kept(folder, e)]
        except OSError:
            left = []
        if left or any(now > then for now, then in zip(used, _BASELINE.get(folder, used), strict=True)):
            found.append(f"residue in {folder}")
    return found


def temporary_use() -> dict[str, tuple[int, int]]:
    """Blocks and inodes in use on each temporary folder's file system (``os.statvfs``)."""
    use = {}
    for folder in TEMPORARY if _SANDBOXED else ():
        try:
            v = os.statvfs(folder)
        except OSError:
            continue
        use[folder] = (v.f_blocks - v.f_bfree, v.f_files - v.f_ffree)
    return use


_BASELINE: dict[str, tuple[int, int]] = {}


def note_baseline() -> None:
    """Note what the temporary folders' file systems use now, before any submission (:func:`residue`
    compares with it)."""
    _BASELINE.update(temporary_use())
