"""The user-style programs in ``examples/`` type-check under ``mypy --strict`` as annotated.

Each program marks what mypy must say about a line at its end:
``# R: <type>`` for the revealed type of a ``reveal_type(...)`` on it, and
``# E: <error-code>`` for an error it must report (a comment after it, such as
``# fmt: skip``, is not part of it); every other error fails the test. mypy
sees ``openprogram`` the way users do, as an installed package (PEP 561: only
with its ``py.typed``): from ``$OPENPROGRAM_TYPING_SITE``, the target
directory ``scripts/typing_check.sh`` installs the built wheel into, or else
from a copy of this tree's package laid out the same way. The programs in
``programs/`` (pytest runs them as tests), the README's blocks, the docs'
"Typed answers" section and every docs block marked ``<!-- mypy --strict -->``
must type-check clean.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
EXAMPLES = sorted(p.name for p in (HERE / "examples").glob("*.py"))
PROGRAMS = sorted(p.name for p in (HERE / "programs").glob("test_*.py"))
"""Whole programs on the shipped fakes, run by pytest as tests: they must type-check clean."""
ROOT = HERE.parent.parent
PACKAGE = ROOT / "openprogram"
README_PROGRAM = "readme_blocks.py"
"""The README's python blocks, joined: what a new user pastes first must pass ``--strict``."""
TYPED_DOCS = (ROOT / "docs" / "decisions.md", "## Typed answers")
"""A docs section about typing: its python blocks, joined, must pass ``--strict`` too."""
TYPED_DOCS_PROGRAM = "typed_docs_blocks.py"
DOCS = ROOT / "docs"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
_STRICT_BLOCK = re.compile(r"^<!-- mypy --strict -->\n```python\n(.*?)^```", re.S | re.M)
"""A docs block marked so must pass ``--strict`` on its own (it then imports all it uses)."""
SITE_ENV = "OPENPROGRAM_TYPING_SITE"

_EXPECT = re.compile(r"#\s*(?P<kind>[RE]):\s*(?P<value>[^#]+?)\s*(?:#.*)?$")
_FINDING = re.compile(r"^(?P<file>[^:\s]+\.py):(?P<line>\d+): (?P<level>error|note): (?P<msg>.*)$")
_CODE = re.compile(r"\[(?P<code>[a-z0-9-]+)\]$")
_REVEALED = re.compile(r'^Revealed type is "(?P<type>.*)"$')
_NAMES = re.compile(r'#\s*E:[^#]*#\s*names "(?P<keyword>[^"]+)"')

Finding = tuple[int, str, str]
"""``(line, "R" or "E", revealed type or error code)``."""


def expected_findings(source: str) -> set[Finding]:
    """What the ``# R:`` / ``# E:`` comments of a program ask mypy to report."""
    found: set[Finding] = set()
    for number, line in enumerate(source.splitlines(), start=1):
        if (match := _EXPECT.search(line)) is not None:
            found.add((number, match["kind"], match["value"]))
    return found


def reported_findings(output: str) -> dict[str, set[Finding]]:
    """Revealed types and error codes in mypy's output, per file name."""
    found: dict[str, set[Finding]] = {}
    for line in output.splitlines():
        if (match := _FINDING.match(line)) is None:
            continue
        where = found.setdefault(Path(match["file"]).name, set())
        number, message = int(match["line"]), match["msg"]
        if match["level"] == "error":
            code = _CODE.search(message)
            where.add((number, "E", code["code"] if code else message))
        elif (revealed := _REVEALED.match(message)) is not None:
            where.add((number, "R", revealed["type"]))
    return found


def typed_docs_blocks() -> list[str]:
    """The python blocks of the docs section that ``TYPED_DOCS`` names."""
    page, heading = TYPED_DOCS
    text = page.read_text(encoding="utf-8")
    assert heading in text, f"{page.name} has no section {heading!r}"
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    return _BLOCK.findall(section)


def strict_docs_blocks() -> dict[str, str]:
    """The docs' blocks marked ``<!-- mypy --strict -->``, each as a program named for its place."""
    programs = {}
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for match in _STRICT_BLOCK.finditer(text):
            line = text.count("\n", 0, match.start(1)) + 1
            programs[f"docs_{page.stem.replace('-', '_')}_{line}.py"] = match[1]
    return programs


def _site(tmp: Path) -> Path:
    """The directory mypy finds ``openprogram`` in, as an installed package."""
    if configured := os.environ.get(SITE_ENV):
        site = Path(configured)
        assert list(site.glob("openprogram_ai-*.dist-info")), f"{site} holds no installed wheel"
        return site
    site = tmp / "site"
    shutil.copytree(PACKAGE, site / "openprogram", ignore=shutil.ignore_patterns("__pycache__"))
    return site


@pytest.fixture(scope="module")
def mypy_output(tmp_path_factory: pytest.TempPathFactory) -> str:
    """What one ``mypy --strict`` run over every example prints, run outside this source tree."""
    tmp = tmp_path_factory.mktemp("typing")
    site = _site(tmp)
    assert (site / "openprogram" / "py.typed").is_file(), "py.typed is missing from the package"
    programs = tmp / "programs"
    programs.mkdir()
    for name in EXAMPLES:
        shutil.copy(HERE / "examples" / name, programs / name)
    for name in PROGRAMS:
        shutil.copy(HERE / "programs" / name, programs / name)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (programs / README_PROGRAM).write_text("\n".join(_BLOCK.findall(readme)), encoding="utf-8")
    (programs / TYPED_DOCS_PROGRAM).write_text("\n".join(typed_docs_blocks()), encoding="utf-8")
    docs_blocks = strict_docs_blocks()
    for name, source in docs_blocks.items():
        (programs / name).write_text(source, encoding="utf-8")
    # PYTHONPATH entries count as installed packages for mypy, which then needs py.typed.
    env = {**os.environ, "PYTHONPATH": str(site)}
    command = [sys.executable, "-m", "mypy", "--strict", "--show-error-codes", "--no-pretty"]
    command += ["--hide-error-context", "--no-error-summary", "--cache-dir", str(tmp / "cache")]
    done = subprocess.run(
        [*command, *EXAMPLES, *PROGRAMS, README_PROGRAM, TYPED_DOCS_PROGRAM, *docs_blocks],
        cwd=programs,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode in (0, 1), f"mypy crashed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def mypy_report(mypy_output: str) -> dict[str, set[Finding]]:
    """The revealed types and error codes of the run, per file name."""
    return reported_findings(mypy_output)


def test_examples_exist() -> None:
    expected = {"agentic.py", "bad_keywords.py", "choices.py", "exec_results.py"}
    assert expected | {"runtime_access.py", "tools_and_functions.py"} <= set(EXAMPLES)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_type_checks_as_annotated(name: str, mypy_report: dict[str, set[Finding]]) -> None:
    expected = expected_findings((HERE / "examples" / name).read_text(encoding="utf-8"))
    assert expected, f"{name} asserts nothing: mark lines with # R: or # E:"
    reported = mypy_report.get(name, set())
    missing = sorted(expected - reported)
    unexpected = sorted(reported - expected)
    assert (missing, unexpected) == ([], []), (
        f"{name}: expected but not reported {missing}; reported but not expected {unexpected}"
    )


def test_programs_exist() -> None:
    assert {"test_gate_rules.py", "test_support_agent.py"} <= set(PROGRAMS)


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_type_checks_clean(name: str, mypy_report: dict[str, set[Finding]]) -> None:
    assert mypy_report.get(name, set()) == set()


def test_a_bad_keyword_is_one_short_error_naming_it(mypy_output: str) -> None:
    """bad_keywords.py: a line that ``names`` a keyword gets one error quoting it, and little else.

    Before, a typo'd ``exec`` keyword got about 10,000 characters: every overload, listed.
    """
    name = "bad_keywords.py"
    said: dict[int, list[str]] = {}
    for line in mypy_output.splitlines():
        if (match := _FINDING.match(line)) is not None and Path(match["file"]).name == name:
            said.setdefault(int(match["line"]), []).append(line)
    source = (HERE / "examples" / name).read_text(encoding="utf-8").splitlines()
    named = {n: m[1] for n, text in enumerate(source, 1) if (m := _NAMES.search(text))}
    assert len(named) >= 15, "bad_keywords.py lost its examples"
    for number, keyword in named.items():
        lines = said.get(number, [])
        errors = [line for line in lines if ": error: " in line]
        assert len(errors) == 1, f"{name}:{number}: expected one error, got {lines}"
        assert f'"{keyword}"' in errors[0], (
            f"{name}:{number}: {errors[0]!r} does not name {keyword}"
        )
        assert sum(map(len, lines)) < 400, f"{name}:{number}: too long: {lines}"


def test_readme_blocks_type_check_clean(mypy_report: dict[str, set[Finding]]) -> None:
    assert mypy_report.get(README_PROGRAM, set()) == set()


def test_typed_docs_blocks_type_check_clean(mypy_report: dict[str, set[Finding]]) -> None:
    assert typed_docs_blocks(), "the typed-answers section of the docs lost its examples"
    assert mypy_report.get(TYPED_DOCS_PROGRAM, set()) == set()


def test_marked_docs_blocks_type_check_clean(mypy_report: dict[str, set[Finding]]) -> None:
    """Docs blocks that read messages, pick options or type answers pass ``--strict`` as written."""
    blocks = strict_docs_blocks()
    assert len(blocks) >= 5, "the docs lost their blocks marked <!-- mypy --strict -->"
    assert {name: mypy_report[name] for name in blocks if name in mypy_report} == {}


def test_the_comparison_catches_a_difference() -> None:
    """The checker itself: a wrong revealed type and a missing error are both caught."""
    source = "reveal_type(x)  # R: int  # fmt: skip\nf(1)  # E: arg-type\n"
    output = 'p.py:1: note: Revealed type is "Any"\np.py:3: error: Bad  [misc]\n'
    assert expected_findings(source) == {(1, "R", "int"), (2, "E", "arg-type")}
    assert reported_findings(output) == {"p.py": {(1, "R", "Any"), (3, "E", "misc")}}
