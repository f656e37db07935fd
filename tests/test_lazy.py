"""Tests of botorch_unknown_hypers.lazy (names imported on first access)."""

from __future__ import annotations

import sys
import types

import pytest

from botorch_unknown_hypers.lazy import lazy_attributes


def _package(paths: dict[str, str]) -> types.ModuleType:
    module = types.ModuleType("fake_package")
    module.eager = 1
    module.__getattr__, module.__dir__ = lazy_attributes(vars(module), paths)
    return module


def test_a_lazy_name_is_imported_on_first_access_and_kept():
    sys.modules.pop("colorsys", None)  # a small standard-library module nothing else here imports
    package = _package({"rgb_to_hsv": "colorsys"})
    assert "colorsys" not in sys.modules and "rgb_to_hsv" not in vars(package)
    value = package.rgb_to_hsv
    assert value is sys.modules["colorsys"].rgb_to_hsv
    assert vars(package)["rgb_to_hsv"] is value  # later lookups skip __getattr__


def test_dir_lists_eager_and_lazy_names():
    package = _package({"rgb_to_hsv": "colorsys"})
    assert {"eager", "rgb_to_hsv"} <= set(dir(package))
    assert dir(package) == sorted(dir(package))


def test_an_unknown_name_raises_attribute_error_naming_module_and_name():
    package = _package({"rgb_to_hsv": "colorsys"})
    with pytest.raises(AttributeError, match=r"module 'fake_package' has no attribute 'hsv_to_rgb'"):
        package.hsv_to_rgb
    assert not hasattr(package, "missing")
