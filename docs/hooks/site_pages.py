r"""MkDocs hook: the pages the site builds from the repository rather than from ``docs/``.

- The notebooks (``notebooks/*.ipynb`` and ``notebooks/README.md``) are added as pages under
  ``notebooks/``; ``mkdocs-jupyter`` renders them (and runs them when its ``execute`` is on).
  This hook runs before that plugin's own ``on_files`` so that it sees them.
- ``api/methods.md`` is written at build time from the method registry
  (``botorch_unknown_hypers.policies.registry.METHODS``): one section per registered name with
  the class (or factory) it builds and that object's docstring and constructor options, found
  through its ``__module__`` and ``__qualname__``. Module paths are therefore never written by
  hand, and a method registered later appears without an edit here.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
METHODS_PAGE = "api/methods.md"


def _object_path(factory: object) -> str:
    r"""The import path mkdocstrings resolves for a registered factory (class or function)."""
    target = factory.func if hasattr(factory, "func") else factory  # functools.partial
    return f"{target.__module__}.{target.__qualname__}"


def methods_page() -> str:
    r"""The Markdown of ``api/methods.md``: every registered method, its class and options."""
    from botorch_unknown_hypers.policies.registry import METHODS

    lines = [
        "# Methods and their options",
        "",
        "Every name accepted by `make_policy(name, domain, seed=..., **options)`, by",
        "`buh run --method NAME --option key=value` and by the integrations, with the class it builds.",
        "The options of a method are the keyword arguments of that class's constructor below;",
        "`domain`, `seed`, `device` and `dtype` are given by `make_policy` itself.",
        "This page is generated from the registry when the site is built, so it lists exactly",
        "what the installed package registers (`buh list` prints the same names).",
        "",
        "| method | class |",
        "|---|---|",
    ]
    seen: dict[str, str] = {}
    for name, factory in METHODS.items():
        path = _object_path(factory)
        lines.append(f"| [`{name}`](#{_anchor(name)}) | `{path}` |")
    lines.append("")
    for name, factory in METHODS.items():
        path = _object_path(factory)
        lines += [f"## `{name}` {{#{_anchor(name)}}}", ""]
        if path in seen:  # one class under two names: document it once
            lines += [f"Built by the same class as [`{seen[path]}`](#{_anchor(seen[path])}).", ""]
            continue
        seen[path] = name
        summary = (inspect.getdoc(factory) or "").strip().splitlines()
        if not summary:
            raise ValueError(f"method {name!r}: {path} has no docstring; the methods page needs one.")
        lines += [
            f"::: {path}",
            "    options:",
            "      heading_level: 3",
            "      show_root_heading: true",
            "      show_root_full_path: true",
            "      members: false",
            "      merge_init_into_class: true",
            "",
        ]
    return "\n".join(lines) + "\n"


def _anchor(name: str) -> str:
    return "method-" + name.replace(".", "-")


@event_priority(100)  # before mkdocs-jupyter's on_files, which wraps the notebook files
def on_files(files: Files, config) -> Files:
    for path in sorted(NOTEBOOKS.glob("*.ipynb")) + [NOTEBOOKS / "README.md"]:
        # A plain File whose source folder is the repository root (mkdocs-jupyter reads
        # ``src_dir``; a generated File has none).
        files.append(
            File(
                f"notebooks/{path.name}",
                src_dir=str(ROOT),
                dest_dir=config["site_dir"],
                use_directory_urls=config["use_directory_urls"],
            )
        )
    files.append(File.generated(config, METHODS_PAGE, content=methods_page()))
    return files
