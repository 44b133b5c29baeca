"""`python -m svc.supervise NAME...`: the Procfile's processes of those names, started together
and stopped together. `python -m svc.serve` becomes this process (exec) once the database is
migrated, so what stays in front of the service for its whole life imports nothing of the app.

Each process runs in a process group of its own, its output straight to ours (no relay). When
one exits, or this process gets SIGTERM, SIGINT or SIGHUP, every group gets SIGTERM, and
SIGKILL what is left STOP_SECONDS later. honcho did this job until it was seen, on a loaded
host, sitting at its own interpreter's exit without ever signalling the processes it ran
(docs/performance.md, "Memory"): a stop here always ends, at the latest at the deadline.
"""

import argparse
import contextlib
import os
import shlex
import signal
import sys
import time
from pathlib import Path

# gunicorn's graceful_timeout (20 s) and a few seconds for the scheduler's running job.
STOP_SECONDS = 25.0
WATCHED = {signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
# glibc gives each thread that allocates an arena of its own, up to eight a core, and keeps
# what was freed in each: the scheduler's many threads grew with them (docs/performance.md,
# "Memory"). An operator's own value stands.
ENVIRONMENT = {"MALLOC_ARENA_MAX": "2"}


def procfile(path: Path) -> dict[str, list[str]]:
    """`name: command` per line, as Procfile has them; comments and blank lines skipped. The
    commands are split as a shell would split them and run without one, so a signal reaches
    the program itself (a shell in between would end at once and leave it running)."""
    entries = {}
    for line in path.read_text().splitlines():
        name, colon, command = line.partition(":")
        if colon and name.strip() and not name.lstrip().startswith("#"):
            entries[name.strip()] = shlex.split(command)
    return entries


def supervise(commands: dict[str, list[str]], stop_seconds: float = STOP_SECONDS) -> int:
    """Run every command until one ends or a stop is asked for, then stop them all. 0 after a
    stop that was asked for and ended cleanly; otherwise the exit status of the process that
    ended first on its own (or of one that had to be killed), as a shell writes it."""
    # The signals wait in the kernel until this loop reads them: no handler runs between two
    # lines of it, and none is lost while the processes start.
    signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
    environment = {**ENVIRONMENT, **os.environ}
    children = {}
    for name, argv in commands.items():
        pid = os.posix_spawnp(argv[0], argv, environment, setpgroup=0, setsigmask=(),
                              setsigdef=WATCHED)  # fmt: skip
        children[pid] = name
        say(f"{name} started (pid {pid})")
    asked, status, deadline = False, None, None
    while children:
        received = signal.sigtimedwait(WATCHED, 1.0)
        if received and received.si_signo != signal.SIGCHLD and not asked:
            say(f"{signal.Signals(received.si_signo).name}: stopping")
            asked = True
        for pid, code in _ended():
            name = children.pop(pid, None)  # not ours: an orphan this process reaped as init
            if name is None:
                continue
            say(f"{name} exited with {code}")
            stopped_as_asked = deadline is not None and code in (0, 128 + signal.SIGTERM)
            if status is None and not stopped_as_asked:
                status = code
        if (asked or status is not None) and deadline is None:
            deadline = time.monotonic() + stop_seconds
            _signal_all(children, signal.SIGTERM)
        if deadline is not None and time.monotonic() > deadline and children:
            say(f"{', '.join(children.values())} still running after {stop_seconds:g} s: killed")
            _signal_all(children, signal.SIGKILL)
            deadline = float("inf")
    return 0 if status is None else status


def _ended():
    """(pid, exit status as a shell writes it: 128 + the signal) of every child that ended."""
    while True:
        try:
            pid, wait_status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        code = os.waitstatus_to_exitcode(wait_status)
        yield pid, (128 - code if code < 0 else code)


def _signal_all(children: dict[int, str], signum: int) -> None:
    for pid in children:
        with contextlib.suppress(ProcessLookupError):  # ended meanwhile; reaped next turn
            os.killpg(pid, signum)


def say(line: str) -> None:
    print(f"serve: {line}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m svc.supervise")
    parser.add_argument("names", nargs="*", help="Procfile entries to run (default: all)")
    parser.add_argument("--procfile", type=Path, default=Path("Procfile"))
    parser.add_argument("--stop-seconds", type=float, default=STOP_SECONDS)
    options = parser.parse_args(argv)
    entries = procfile(options.procfile)
    unknown = sorted(set(options.names) - set(entries))
    if unknown:
        parser.error(f"not in {options.procfile}: {', '.join(unknown)}")
    chosen = {name: entries[name] for name in options.names or entries}
    return supervise(chosen, options.stop_seconds)


if __name__ == "__main__":
    sys.exit(main())
