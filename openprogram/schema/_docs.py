"""Docstrings for schemas: which style, which parameters they name, what they describe.

Decoration must stay cheap (tens of microseconds per tool), and a full
``docstring_parser`` parse costs about as much as everything else together.
So decoration runs :func:`documented_names_outside`, which scans the docstring
with one regex for a *superset* of the names any parser could report; only
when that superset names something that is not a parameter does it run the
real parser to decide. The descriptions themselves are read lazily, when a
schema is first needed, with :func:`parse`.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeAlias

if TYPE_CHECKING:  # the parser is imported lazily (import-time budget)
    from docstring_parser import Docstring

__all__ = ["DocInfo", "Style", "detect_style", "documented_names_outside", "is_blank", "parse"]

Style: TypeAlias = Literal["google", "numpy", "rest", "epydoc"]

# reST field lists (``:param x:``, ``:param int x:``); the keywords docstring_parser maps to params.
_REST_FIELD = re.compile(r"^[ \t]*:(?:param|parameter|arg|argument|key|keyword)\b([^:\n]*):", re.M)
_EPYDOC_FIELD = re.compile(r"^[ \t]*@(?:param|keyword|type)[ \t]+([^:\n]*):", re.M)
_INDENTS = re.compile(r"\n([ \t]*)(?=\S)")  # indentation of each non-blank line but the first
_NUMPY_UNDERLINE = re.compile(r"^[ \t]*-{3,}[ \t]*$", re.M)
# Any line but the first that starts with a word (``*``-prefixed or not), then ``(...)``
# and/or ``:``;
# Google entries are such lines, so the names they capture are a superset of Google params.
_COLON_LINE = re.compile(r"\n([ \t]*)(\*{0,2}[^\s:(][^:(\n]*?)[ \t]*(?:\([^\n]*?\))?[ \t]*:")
_SECTION_FIRST = re.compile(
    r"(?:Args|Arguments|Parameters|Params|Returns?|Raises|Yields?|Attributes|Examples?|Notes?)"
    r"[ \t]*:?[ \t]*$|[:@](?:param|parameter|arg|argument|key|keyword|type|returns?|raises?)\b"
)
# docstring_parser reports class attributes as params too; a function's docstring means params.
_NOT_PARAMS = frozenset({"attribute"})


@dataclass(frozen=True, slots=True)
class DocInfo:
    """What a docstring says, for a schema."""

    description: str
    """Summary, a blank line, then the long description ("" when there is none)."""
    params: dict[str, str] = field(default_factory=dict)
    """Parameter name -> its description, for every documented parameter."""


def is_blank(doc: str | None) -> bool:
    """Whether ``doc`` has no description text (empty, or opening with a section).

    Args:
        doc: The raw docstring.
    """
    if doc is None:
        return True
    text = doc.strip()
    return not text or _SECTION_FIRST.fullmatch(text.split("\n", 1)[0].strip()) is not None


def detect_style(doc: str) -> Style:
    """The docstring's style, from its markers (Google when nothing else shows).

    Args:
        doc: The raw docstring.
    """
    if ":" in doc and _REST_FIELD.search(doc):
        return "rest"
    if "@" in doc and _EPYDOC_FIELD.search(doc):
        return "epydoc"
    if "---" in doc and _NUMPY_UNDERLINE.search(doc):
        return "numpy"
    return "google"


def documented_names_outside(doc: str | None, params: Collection[str]) -> list[str]:
    """Names the docstring documents as parameters that are not in ``params``.

    Cheap in the common case: a regex scan finds a superset of the documented
    names; only when it finds a stranger is the docstring really parsed.

    Args:
        doc: The raw docstring.
        params: Every parameter name of the signature (hidden ones included); a
            documented ``*args`` or ``**kwargs`` counts as ``args`` or ``kwargs``.

    Returns:
        The strangers, in docstring order, without duplicates.
    """
    if not doc:
        return []
    style = detect_style(doc)
    candidates = _candidates(doc, style)
    if all(name.lstrip("*") in params for name in candidates):
        return []
    strangers: list[str] = []
    for name in _parse_param_names(doc, style):
        if name.lstrip("*") not in params and name not in strangers:
            strangers.append(name)
    return strangers


def parse(doc: str | None) -> DocInfo:
    """Parse ``doc`` fully (lazy path: only when a description is needed).

    Args:
        doc: The raw docstring.
    """
    if not doc or not doc.strip():
        return DocInfo(description="")
    parsed = _parse(doc, detect_style(doc))
    parts = [p for p in (parsed.short_description, parsed.long_description) if p]
    params: dict[str, str] = {}
    for p in parsed.params:
        if p.args[0] in _NOT_PARAMS or not p.description:
            continue
        for name in _split_names(p.arg_name):
            params.setdefault(name, p.description.strip())
    return DocInfo(description="\n\n".join(parts), params=params)


def _candidates(doc: str, style: Style) -> list[str]:
    if style == "rest":
        return [w for m in _REST_FIELD.finditer(doc) for w in m.group(1).split()]
    if style == "epydoc":
        return [w for m in _EPYDOC_FIELD.finditer(doc) for w in m.group(1).split()]
    if style == "numpy":
        base = min(map(len, _INDENTS.findall(doc)), default=0)
        return _numpy_candidates(doc.split("\n"), base)
    # Google entries sit deeper than their section title, itself a colon line at the base
    # indentation: lines deeper than the shallowest colon line cover every entry.
    found = [(len(m.group(1)), m.group(2)) for m in _COLON_LINE.finditer(doc)]
    base = min((indent for indent, _ in found), default=0)
    return [name.strip() for indent, name in found if indent > base]


def _numpy_candidates(lines: list[str], base: int) -> list[str]:
    # numpydoc entries are lines at the base indentation inside a section (name [: type]);
    # section titles (a line followed by dashes) and the dashes themselves are not entries.
    names: list[str] = []
    for i, line in enumerate(lines[1:], start=1):
        stripped = line.strip()
        if not stripped or len(line) - len(line.lstrip()) != base or set(stripped) == {"-"}:
            continue
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if following and set(following) == {"-"}:
            continue
        names.extend(_split_names(stripped.split(":", 1)[0]))
    return names


def _split_names(arg_name: str | None) -> list[str]:
    # numpydoc allows "x, y : int" for two parameters sharing a description.
    if not arg_name:
        return []
    return [n.strip() for n in arg_name.split(",") if n.strip()]


def _parse_param_names(doc: str, style: Style) -> list[str]:
    parsed = _parse(doc, style)
    return [
        name
        for p in parsed.params
        if p.args[0] not in _NOT_PARAMS
        for name in _split_names(p.arg_name)
    ]


def _parse(doc: str, style: Style) -> Docstring:
    # Imported here, not at module top: only the lazy path and the rare exact check need it,
    # and keeping it out of `import openprogram` protects the import-time budget.
    import docstring_parser  # noqa: PLC0415

    styles = {
        "google": docstring_parser.DocstringStyle.GOOGLE,
        "numpy": docstring_parser.DocstringStyle.NUMPYDOC,
        "rest": docstring_parser.DocstringStyle.REST,
        "epydoc": docstring_parser.DocstringStyle.EPYDOC,
    }
    try:
        return docstring_parser.parse(doc, styles[style])
    except docstring_parser.ParseError:
        # A docstring that does not follow its style strictly still has a description:
        # fall back to the parser that tries every style.
        try:
            return docstring_parser.parse(doc)
        except docstring_parser.ParseError:
            return docstring_parser.Docstring()
