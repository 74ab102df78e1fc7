"""The supervisor's lifecycle against a fake child that speaks the same handshake."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from openprogram.exceptions import ConfigurationError, LLMError
from openprogram.providers.local import LOCAL_MODEL, PROFILES
from openprogram.providers.local._embedded import (
    ServerOptions,
    Supervisor,
    _child,
    _server,
    _threads,
)

from . import _fake_child

_FAKE_ENV = {"FAKE_CHILD_MODE", "FAKE_CHILD_SICK"}  # the child's environment is an allowlist


def _gone(pid: int, within_s: float = 10.0) -> bool:
    """Whether ``pid`` has exited (a zombie counts) within the time given."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Supervisor]:
    """A supervisor whose child is the fake; stopped after the test."""
    monkeypatch.setattr(_child, "CHILD_CODE", _fake_child.CODE)
    monkeypatch.setattr(_server, "ensure_weights", lambda spec: tmp_path / "model.gguf")
    monkeypatch.setattr(_child, "_CHILD_ENV_NAMES", _child._CHILD_ENV_NAMES | _FAKE_ENV)
    monkeypatch.setenv("FAKE_CHILD_MODE", "ok")
    supervisor = Supervisor(PROFILES[LOCAL_MODEL], ServerOptions(start_timeout_s=60.0))
    yield supervisor
    supervisor.stop()


def test_start_returns_a_loopback_v1_url_that_is_healthy(fake: Supervisor) -> None:
    assert fake.base_url is None
    url = fake.ensure()
    assert url.startswith("http://127.0.0.1:")
    assert url.endswith("/v1")
    assert httpx.get(url.removesuffix("/v1") + "/health").status_code == 200
    assert fake.base_url == url
    assert fake.pid is not None


def test_later_calls_reuse_the_running_server(fake: Supervisor) -> None:
    url = fake.ensure()
    pid = fake.pid
    assert fake.ensure() == url
    assert fake.ensure(check_health=True) == url
    assert fake.pid == pid


def test_a_dead_server_is_restarted(fake: Supervisor) -> None:
    fake.ensure()
    pid = fake.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while fake.pid is not None and time.monotonic() < deadline:
        time.sleep(0.05)  # a killed leader shows as a zombie before its threads are all gone
    url = fake.ensure()
    assert fake.pid not in (None, pid), (pid, fake.pid, url)
    assert httpx.get(url.removesuffix("/v1") + "/health").status_code == 200


def test_an_unhealthy_server_is_replaced_when_health_is_checked(
    fake: Supervisor, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    sick = tmp_path / "sick"
    monkeypatch.setenv("FAKE_CHILD_SICK", str(sick))
    fake.ensure()
    pid = fake.pid
    sick.write_text(str(pid))
    assert fake.ensure() is not None  # without a health check the live process is kept
    assert fake.pid == pid
    fake.ensure(check_health=True)
    assert fake.pid != pid
    assert pid is not None
    assert _gone(pid)


def test_stop_ends_the_child_and_is_idempotent(fake: Supervisor) -> None:
    fake.ensure()
    pid = fake.pid
    assert pid is not None
    fake.stop()
    assert _gone(pid, within_s=1.0)
    assert fake.base_url is None
    fake.stop()


def test_concurrent_first_use_starts_one_server(fake: Supervisor) -> None:
    urls: list[str] = []
    threads = [threading.Thread(target=lambda: urls.append(fake.ensure())) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(urls) == 6
    assert len(set(urls)) == 1


def test_a_crash_at_start_raises_with_the_server_log(
    fake: Supervisor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CHILD_MODE", "crash")
    with pytest.raises(LLMError) as info:
        fake.ensure()
    err = info.value
    assert err.reason == "server"
    assert "exited with code 3" in err.message
    assert "boom: the fake model failed to load" in err.message
    assert fake.pid is None


def test_a_server_that_never_announces_itself_times_out(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_child, "CHILD_CODE", _fake_child.CODE)
    monkeypatch.setattr(_server, "ensure_weights", lambda spec: tmp_path / "model.gguf")
    monkeypatch.setattr(_child, "_CHILD_ENV_NAMES", _child._CHILD_ENV_NAMES | _FAKE_ENV)
    monkeypatch.setenv("FAKE_CHILD_MODE", "silent")
    supervisor = Supervisor(PROFILES[LOCAL_MODEL], ServerOptions(start_timeout_s=1.0))
    started = time.monotonic()
    with pytest.raises(LLMError, match="did not load the model in time"):
        supervisor.ensure()
    assert time.monotonic() - started < 15
    assert supervisor.pid is None


_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from openprogram.providers.local import PROFILES
    from openprogram.providers.local._embedded import Supervisor, _child, _server
    _child.CHILD_CODE = {code!r}
    _server.ensure_weights = lambda spec: Path("unused.gguf")
    supervisor = Supervisor(PROFILES["qwen2.5-coder-0.5b"])
    supervisor.ensure()
    print(supervisor.pid, flush=True)
    if sys.argv[1] == "hang":
        time.sleep(120)
    """
)


def _run_parent(mode: str) -> tuple[subprocess.Popen[str], int]:
    parent = subprocess.Popen(
        [sys.executable, "-c", _SCRIPT.format(code=_fake_child.CODE), mode],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "FAKE_CHILD_MODE": "ok"},
    )
    assert parent.stdout is not None
    line = parent.stdout.readline()
    assert line.strip().isdigit(), f"parent printed {line!r}"
    return parent, int(line)


def test_the_child_stops_when_the_interpreter_exits() -> None:
    parent, child = _run_parent("exit")
    with parent:
        assert parent.wait(timeout=30) == 0
    assert _gone(child)


def test_the_child_stops_when_its_parent_is_killed() -> None:
    parent, child = _run_parent("hang")
    with parent:
        parent.kill()
        parent.wait(timeout=30)
    assert _gone(child)


class Stat:
    """``/proc/stat`` as a file whose first line moves on when the sample waits."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines: Iterator[str] = iter(())

    def show(self, *lines: str) -> None:
        """The first line before the wait, then the one after it."""
        self.lines = iter(lines)
        self.wait(0.0)

    def busy(self, busy: int, idle: int) -> None:
        """Between the two reads, ``busy`` ticks busy and ``idle`` idle over all CPUs."""
        self.show(
            "cpu  1000 0 0 1000 0 0 0 0 0 0", f"cpu  {1000 + busy} 0 0 {1000 + idle} 0 0 0 0 0 0"
        )

    def wait(self, seconds: float) -> None:
        self.path.write_text(next(self.lines) + "\ncpu0 1 2 3 4 5 6 7 8 9 10\n")


@pytest.fixture
def stat(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Stat:
    """Four CPUs, no configured threads, and CPU times the test writes."""
    monkeypatch.delenv("OPENPROGRAM_LOCAL_THREADS", raising=False)
    monkeypatch.setattr(_threads.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    monkeypatch.setattr(_threads.os, "cpu_count", lambda: 4)
    fake = Stat(tmp_path / "stat")
    monkeypatch.setattr(_threads, "_PROC_STAT", fake.path)
    monkeypatch.setattr(_threads, "_wait", fake.wait)
    return fake


def test_threads_follow_how_busy_the_cpus_are_now(
    stat: Stat, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The load average says busy (the run before), the CPUs are idle now: all of them.
    monkeypatch.setattr(_threads.os, "getloadavg", lambda: (3.7, 3.0, 2.0))
    stat.busy(0, 400)
    assert _threads.default_threads() == 4
    stat.busy(40, 360)  # 0.4 of a CPU busy: idle enough
    assert _threads.default_threads() == 4
    stat.busy(100, 300)  # one busy: the three others
    assert _threads.default_threads() == 3
    stat.busy(300, 100)  # three busy: the one left
    assert _threads.default_threads() == 1
    stat.busy(400, 0)  # all busy: one thread still
    assert _threads.default_threads() == 1


def test_stolen_time_is_busy_and_waiting_for_io_is_idle(stat: Stat) -> None:
    # 100 ticks idle, 200 waiting for I/O, 100 stolen by the hypervisor: 1 of 4 CPUs busy
    stat.show("cpu  0 0 0 0 0 0 0 0 0 0", "cpu  0 0 0 100 200 0 0 100 0 0")
    assert _threads._busy_cpus(4) == pytest.approx(1.0)


def test_without_cpu_times_the_load_average_decides(
    stat: Stat, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_threads, "_PROC_STAT", tmp_path / "no-such-file")
    monkeypatch.setattr(_threads.os, "getloadavg", lambda: (0.3, 0.2, 0.1))
    assert _threads.default_threads() == 4  # idle enough: all of them
    monkeypatch.setattr(_threads.os, "getloadavg", lambda: (2.0, 3.0, 2.0))
    assert _threads.default_threads() == 2  # two busy: the two others
    monkeypatch.setattr(_threads.os, "sched_getaffinity", lambda pid: set(range(64)))
    monkeypatch.setattr(_threads.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert _threads.default_threads() == 8  # more do not help a 0.5B model

    def no_load() -> tuple[float, float, float]:
        raise OSError("no load average here")

    monkeypatch.setattr(_threads.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    monkeypatch.setattr(_threads.os, "getloadavg", no_load)
    assert _threads.default_threads() == 1  # unknown load: the busy side


def test_the_environment_sets_the_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENPROGRAM_LOCAL_THREADS", "3")
    assert _threads.default_threads() == 3
    monkeypatch.setenv("OPENPROGRAM_LOCAL_THREADS", "many")
    with pytest.raises(ConfigurationError, match="OPENPROGRAM_LOCAL_THREADS"):
        _threads.default_threads()


def test_the_shipped_template_is_package_data() -> None:
    template = PROFILES[LOCAL_MODEL].chat_template()
    assert "<|im_start|>" in template
    assert '{"name": "' in template
    assert "Function results:" in template


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_process_leaves_its_parents_server_alone(fake: Supervisor) -> None:
    url = fake.ensure()
    pid = fake.pid
    child = os.fork()
    if child == 0:  # the forked copy: stopping must not touch the parent's server
        try:
            fake.stop()
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    assert fake.pid == pid
    assert fake.ensure(check_health=True) == url
