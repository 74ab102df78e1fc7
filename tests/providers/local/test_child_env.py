"""The embedded model's server child gets a minimal environment: no API keys or tokens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openprogram.providers.local import LOCAL_MODEL, PROFILES
from openprogram.providers.local._embedded import ServerOptions, Supervisor, _child, _server
from openprogram.providers.local._embedded._child import child_env

from . import _fake_child

SECRETS = {
    "OPENAI_API_KEY": "sk-child-leak-1",
    "ANTHROPIC_API_KEY": "sk-ant-child-leak-2",
    "AWS_SECRET_ACCESS_KEY": "aws-child-leak-3",
    "AWS_SESSION_TOKEN": "aws-token-child-leak-4",
    "GITHUB_TOKEN": "ghp-child-leak-5",
    "MY_DATABASE_PASSWORD": "hunter2-child-leak",
}


def test_child_env_keeps_what_the_interpreter_needs_and_drops_the_rest() -> None:
    environ = {
        **SECRETS,
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "OMP_NUM_THREADS": "2",
        "PYTHONPATH": "/extra",
    }
    env = child_env(environ)
    assert not set(SECRETS) & set(env)
    assert {k: env[k] for k in ("PATH", "HOME", "LANG", "LC_ALL", "OMP_NUM_THREADS")} == {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "OMP_NUM_THREADS": "2",
    }
    first, *rest = env["PYTHONPATH"].split(":")
    assert (Path(first) / "openprogram").is_dir()  # this openprogram first, then the user's
    assert rest == ["/extra"]


def test_the_started_child_sees_no_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen = tmp_path / "env.json"
    # A stand-in child: records its environment, then speaks the fake's handshake.
    code = f"import os, json; open({str(seen)!r}, 'w').write(json.dumps(dict(os.environ))); "
    monkeypatch.setattr(_child, "CHILD_CODE", code + _fake_child.CODE)
    monkeypatch.setattr(_server, "ensure_weights", lambda spec: tmp_path / "model.gguf")
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    supervisor = Supervisor(PROFILES[LOCAL_MODEL], ServerOptions(start_timeout_s=60.0))
    try:
        supervisor.ensure()
    finally:
        supervisor.stop()
    env = json.loads(seen.read_text())
    assert "PATH" in env
    assert not set(SECRETS) & set(env)
    assert not [v for v in SECRETS.values() if v in json.dumps(env)]
