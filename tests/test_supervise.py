"""svc.supervise, what `make run` and the container leave in front of gunicorn and the
scheduler, on a Procfile of the test's own: every process it starts ends when one does or
when a stop is asked for, at the latest at its deadline, children included."""

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from harness.service import wait_until

SLEEPER = "import time; time.sleep(600)"
# Ignores SIGTERM, and starts a child of its own that would outlive it.
STUBBORN = (
    "import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
    "print('child', child.pid, flush=True); time.sleep(600)"
)


def python(code: str) -> str:
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"


def start(tmp_path: Path, entries: dict[str, str], *arguments: str) -> subprocess.Popen:
    procfile = tmp_path / "Procfile"
    procfile.write_text("# a comment\n\n" + "".join(f"{n}: {c}\n" for n, c in entries.items()))
    return subprocess.Popen(
        [sys.executable, "-m", "svc.supervise", "--procfile", str(procfile), *arguments],
        cwd=Path(__file__).resolve().parent.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def alive(pid: int) -> bool:
    try:
        return "zombie" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def started_pids(process: subprocess.Popen, count: int) -> list[int]:
    """The pids the supervisor says it started, read from its output as they come."""
    pids = []
    while len(pids) < count:
        line = process.stdout.readline()
        assert line, "the supervisor ended before starting everything"
        if " started (pid " in line:
            pids.append(int(line.rsplit("pid ", 1)[1].rstrip(")\n")))
    return pids


def test_one_process_ending_stops_the_others_with_its_exit_status(tmp_path):
    failing = python("import time, sys; time.sleep(1); sys.exit(3)")
    process = start(tmp_path, {"web": python(SLEEPER), "worker": failing})
    web, _ = started_pids(process, 2)
    output, _ = process.communicate(timeout=20)
    assert process.returncode == 3, output
    assert "worker exited with 3" in output and "web exited with 143" in output
    assert not alive(web)


def test_a_stop_asked_for_ends_every_process_and_exits_0(tmp_path):
    process = start(tmp_path, {"web": python(SLEEPER), "scheduler": python(SLEEPER)})
    pids = started_pids(process, 2)
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=20)
    assert process.returncode == 0, output
    assert "SIGTERM: stopping" in output
    assert not any(alive(pid) for pid in pids)


def test_only_the_names_asked_for_run(tmp_path):
    process = start(tmp_path, {"web": python(SLEEPER), "scheduler": python("print('ran')")},
                    "scheduler")  # fmt: skip
    output, _ = process.communicate(timeout=20)
    assert process.returncode == 0 and "ran" in output and "web" not in output, output
    refused = start(tmp_path, {"web": python(SLEEPER)}, "nope")
    output, _ = refused.communicate(timeout=20)
    assert refused.returncode == 2 and "not in" in output and "nope" in output


def test_a_process_deaf_to_sigterm_is_killed_with_its_children_at_the_deadline(tmp_path):
    """The stop that hung CI: honcho, at its interpreter's exit, never signalled what it ran,
    and make run outlived the harness's minute. Here what does not end in time is killed,
    process group and all, and the exit status says so."""
    process = start(tmp_path, {"stubborn": python(STUBBORN)}, "--stop-seconds", "1")
    (stubborn,) = started_pids(process, 1)
    line = process.stdout.readline()
    assert line.startswith("child "), line
    grandchild = int(line.split()[1])
    began = time.monotonic()
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=20)
    assert process.returncode == 128 + signal.SIGKILL, output
    assert "still running after 1 s: killed" in output
    assert time.monotonic() - began < 10
    wait_until(lambda: not alive(stubborn) and not alive(grandchild), seconds=5,
               message="the stubborn process and its child to be gone")  # fmt: skip


def test_the_processes_get_two_malloc_arenas_unless_the_operator_says_otherwise(tmp_path):
    """glibc's arenas a thread, kept with what was freed in them, grew the scheduler by 200 MB
    in five minutes of ingest (docs/performance.md)."""
    said = python("import os; print('arenas', os.environ.get('MALLOC_ARENA_MAX'))")
    output, _ = start(tmp_path, {"web": said}).communicate(timeout=20)
    assert "arenas 2" in output, output
    procfile = tmp_path / "Procfile"
    chosen = subprocess.run(
        [sys.executable, "-m", "svc.supervise", "--procfile", str(procfile)],
        cwd=Path(__file__).resolve().parent.parent,
        env={**os.environ, "MALLOC_ARENA_MAX": "8"},
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert "arenas 8" in chosen.stdout, chosen.stdout
