"""Servers the cluster test starts on this machine and stops after: a one-node Slurm cluster
(Debian's ``slurm-wlm`` and ``munge``) and a PostgreSQL server (Debian's ``postgresql``).

Both run from a temporary folder with configuration of their own: nothing of the machine's
(``/etc/slurm``, ``/etc/munge``, a system PostgreSQL cluster) is read or changed, both listen on
127.0.0.1 only, on free ports. Slurm runs cgroup-free (``proctrack/linuxproc``, ``task/none``), so
it runs in a container as root; PostgreSQL refuses to run as root, so as root it runs as the
``postgres`` user the package made (``runuser``). ``slurm_problem()`` and ``postgres_problem()``
say what is missing (None: nothing); ``./course``'s set-up installs the packages.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

__all__ = ["slurm_problem", "postgres_problem", "slurm_cluster", "postgres_server", "free_port"]

SLURM_COMMANDS = ("slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "munged", "mungekey")
NODE = "coursenode"


def free_port() -> int:
    """A TCP port nothing listens on now, on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def slurm_problem() -> str | None:
    """Why a Slurm cluster cannot start here (None: it can)."""
    missing = [c for c in SLURM_COMMANDS if shutil.which(c, path=os.environ.get("PATH", "") + ":/usr/sbin") is None]
    if missing:
        return f"Slurm or munge is not installed (no {', '.join(missing)}; apt-get install slurm-wlm munge)"
    if os.getuid() != 0:
        return "slurmd must run as root to start jobs as their user"
    return None


def _postgres_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[4]))
    return Path(found[-1]).parent if found else None


def postgres_problem() -> str | None:
    """Why a PostgreSQL server cannot start here (None: it can)."""
    if _postgres_bin() is None:
        return "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb; apt-get install postgresql)"
    if os.getuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "as root, PostgreSQL must run as another user, and there is no postgres user"
        if shutil.which("runuser") is None:
            return "as root, PostgreSQL runs as the postgres user through runuser, which is missing"
    return None


def _wait(ready, what: str, timeout: float, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.5)
    said = log.read_text(errors="replace")[-3000:] if log is not None and log.exists() else ""
    raise RuntimeError(f"{what} did not start within {timeout:.0f} s\n{said}")


@contextmanager
def postgres_server(timeout: float = 120) -> Iterator[str]:
    """A PostgreSQL server with an empty database ``gradebook``, on 127.0.0.1 only; yields its
    SQLAlchemy URL (``postgresql+psycopg2://postgres@127.0.0.1:PORT/gradebook``, trust
    authentication: SQLAlchemy 2.1 reads a bare ``postgresql://`` as psycopg 3, not installed).
    Its data folder (in /tmp, owned by the server's user) is removed after."""
    binaries, port = _postgres_bin(), free_port()
    folder = Path(tempfile.mkdtemp(prefix="course-postgres-"))
    as_user: list[str] = []
    if os.getuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(folder, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, log = folder / "data", folder / "server.log"

    def run(*command: str) -> None:
        subprocess.run([*as_user, *command], check=True, capture_output=True, timeout=timeout, cwd=folder)

    try:
        run(str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} -c fsync=off -c max_connections=40"
        run(
            str(binaries / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(log),
            "-o",
            options,
            "-w",
            "-t",
            str(int(timeout)),
            "start",
        )
        run(str(binaries / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "gradebook")
        yield f"postgresql+psycopg2://postgres@127.0.0.1:{port}/gradebook"
    finally:
        with suppress(subprocess.SubprocessError, OSError):
            run(str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(folder, ignore_errors=True)


_SLURM_CONF = """\
ClusterName=course
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={folder}/munge/munge.socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
NodeName={node} NodeHostname=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory} State=UNKNOWN
PartitionName=grading Nodes={node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
"""


def _stop(process: subprocess.Popen | None) -> None:
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def slurm_cluster(cpus: int = 4, memory_mb: int = 8000, timeout: float = 120) -> Iterator[dict]:
    """A one-node Slurm cluster on localhost (slurmctld and slurmd, munge for their
    authentication), cgroup-free; the node offers ``cpus`` CPUs whatever the machine has, so a
    job array's tasks run at once. Yields the environment for ``sbatch``/``squeue``
    (``SLURM_CONF``). Everything is stopped and its folder removed after."""
    folder = Path(tempfile.mkdtemp(prefix="course-slurm-"))
    os.chmod(folder, 0o755)  # munged wants to see its socket folder reachable
    (folder / "munge").mkdir(mode=0o755)
    for name in ("state", "spool"):
        (folder / name).mkdir()
    conf = folder / "slurm.conf"
    conf.write_text(
        _SLURM_CONF.format(
            folder=folder, ctld_port=free_port(), d_port=free_port(), node=NODE, cpus=cpus, memory=memory_mb
        )
    )
    env = dict(os.environ, SLURM_CONF=str(conf), PATH=os.environ.get("PATH", "") + ":/usr/sbin")
    munge = folder / "munge"
    processes: list[subprocess.Popen] = []
    try:
        subprocess.run(["mungekey", "--create", "--keyfile", str(munge / "munge.key")], check=True, env=env)
        daemon = ["munged", "-F", "-f", f"--key-file={munge}/munge.key", f"--socket={munge}/munge.socket"]
        daemon += [f"--pid-file={munge}/munged.pid", f"--log-file={munge}/munged.log", f"--seed-file={munge}/seed"]
        processes.append(subprocess.Popen(daemon, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        _wait(lambda: (munge / "munge.socket").exists(), "munged", timeout, munge / "munged.log")
        for daemon in (["slurmctld", "-D", "-f", str(conf)], ["slurmd", "-D", "-N", NODE, "-f", str(conf)]):
            processes.append(subprocess.Popen(daemon, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

        def idle() -> bool:
            said = subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, capture_output=True, text=True)
            return said.returncode == 0 and said.stdout.strip() in ("idle", "mix", "alloc")

        _wait(idle, "the Slurm node", timeout, folder / "slurmd.log")
        yield env
    finally:
        for process in reversed(processes):
            _stop(process)
        shutil.rmtree(folder, ignore_errors=True)
