r"""Names of a package imported on first access (PEP 562 module ``__getattr__``).

A package re-exports some names from modules that are costly to import (the benchmark
harness with pandas and SciPy's signal processing, rules that pull in BoTorch's model
fitting): :func:`lazy_attributes` gives the package a module ``__getattr__`` that imports the
module holding a name when the name is first asked for (``package.name``, ``from package
import name``, ``from package import *`` through ``__all__``) and keeps it in the package's
namespace, so later lookups cost nothing; and a ``__dir__`` that lists the lazy names too.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(
    namespace: dict[str, Any], paths: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    r"""``(__getattr__, __dir__)`` of a module whose ``namespace`` (its ``globals()``) re-exports
    each name of ``paths`` from the module ``paths[name]``, imported on first access."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        if name not in paths:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(paths[name]), name)
        namespace[name] = value  # later lookups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(paths))

    return __getattr__, __dir__
