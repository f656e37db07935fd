r"""Griffe extension: the package's docstring conventions, read by the site's Google-style parser.

Sphinx roles: ``:math:`x``` becomes ``$x$`` (typeset by MathJax on the site) and
``:class:`~a.b.C``` (also ``:func:``, ``:meth:``, ``:mod:``, ``:attr:``, ``:data:``,
``:obj:``, ``:exc:``) becomes the code span ``C`` (``a.b.C`` without the ``~``).

Grouped parameters: the package groups parameters that share a description on one line, as NumPy
style allows (``num_restarts, raw_samples: Multi-start settings.``). Google style, which the
site's generator parses, reads that line as one parameter called ``"num_restarts,
raw_samples"`` and warns that no such parameter exists. This extension rewrites each grouped
entry into one entry per name, each with the shared description, before the docstring is
parsed; every other line is left as it is, so a documented parameter that the signature lacks
still fails the strict build.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

SECTION = re.compile(r"^(\s*)(Args|Arguments|Parameters|Keyword Args|Keyword Arguments|Other Parameters):\s*$")
MATH = re.compile(r":math:`([^`]+)`")
ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|obj|exc):`(~?)([^`]+)`")
GROUPED = re.compile(r"^(\s+)(\**[A-Za-z_]\w*(?:,\s*\**[A-Za-z_]\w*)+)(\s*\([^)]*\))?:(.*)$")


def sphinx_roles_to_markdown(text: str) -> str:
    r"""``text`` with the Sphinx roles above written as Markdown math and code spans."""
    text = MATH.sub(lambda m: f"${m.group(1).strip()}$", text)
    return ROLE.sub(lambda m: f"`{m.group(2).rsplit('.', 1)[-1] if m.group(1) else m.group(2)}`", text)


def expand_grouped_args(text: str) -> str:
    r"""``text`` with every grouped ``Args`` entry split into one entry per name."""
    lines = text.splitlines()
    out: list[str] = []
    section_indent: int | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        header = SECTION.match(line)
        if header:
            section_indent = len(header.group(1))
            out.append(line)
            i += 1
            continue
        indent = len(line) - len(line.lstrip())
        if section_indent is not None and line.strip() and indent <= section_indent:
            section_indent = None  # the section ended
        entry = GROUPED.match(line) if section_indent is not None else None
        if entry is None:
            out.append(line)
            i += 1
            continue
        entry_indent = len(entry.group(1))
        continuation = []
        i += 1
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > entry_indent):
            if not lines[i].strip() and (i + 1 >= len(lines) or len(lines[i + 1]) - len(lines[i + 1].lstrip()) <= entry_indent):
                break
            continuation.append(lines[i])
            i += 1
        for name in (n.strip() for n in entry.group(2).split(",")):
            out.append(f"{entry.group(1)}{name}{entry.group(3) or ''}:{entry.group(4)}")
            out.extend(continuation)
    return "\n".join(out)


class PackageDocstrings(griffe.Extension):
    r"""Rewrite every loaded object's docstring as described in the module docstring."""

    def on_instance(self, *, node: Any, obj: griffe.Object, agent: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = sphinx_roles_to_markdown(expand_grouped_args(obj.docstring.value))
