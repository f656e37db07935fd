r"""One JSON codec for every policy state dataclass: no pickle, strict validation.

A policy keeps its memory (play counts, recorded widths, eliminated sets,
hyperposteriors, pending selections) in a ``@dataclass`` of tensors and plain
values. :func:`encode_state` turns an instance into a JSON-safe dict (always
accepted by ``json.dumps(..., allow_nan=False)``); :func:`decode_state` rebuilds
it from the field annotations (resolved with ``typing.get_type_hints``). Loaded
states are untrusted: decoding never uses pickle, ``eval`` or names taken from
the data, never modifies its input, and raises a ``ValueError`` naming the path
of the bad value (``state['extra']['counts'][3]``), what was expected and what
was given. An unsupported annotation raises ``TypeError`` (a programming error).

Encoding by annotation:

- ``int`` / ``float`` / ``bool`` / ``str``: the JSON scalar. A bool is not an
  int; floats must be finite (use ``float | None`` for "absent"); a JSON int is
  accepted for a float.
- ``None`` and ``T | None``: ``null`` or the encoding of ``T``.
- ``list[T]``, ``tuple[T, ...]``: a JSON list.
- ``dict[str, T]``, ``dict[int, T]``: a JSON object; int keys are canonical
  decimal strings (``"3"``, ``"-1"``, not ``"01"``).
- ``torch.Tensor``: ``{"dtype": "float" | "int" | "bool", "shape": [...], "data": [...]}``,
  the entries flattened row-major. On decode "float" gets the ``dtype`` of
  :func:`decode_state` (entries finite), "int" ``torch.long``, "bool"
  ``torch.bool``, all on its ``device``.
- a dataclass: ``{field: encoding}`` of its ``init`` fields; missing fields take
  their defaults. Once built, its ``check()`` (if any) is called; a
  ``ValueError`` from it is re-raised with the path prefixed.
- a class with ``to_dict()`` and ``from_dict(data, dtype=..., device=...)``
  (e.g. a candidate set; an abstract base such as
  :class:`~botorch_unknown_hypers.candidates.CandidateSpec` dispatches on a type tag in its
  own ``from_dict``): its ``to_dict()``; errors of ``from_dict`` become a ``ValueError``
  naming the path.
- ``JSONValue`` and ``Any``: a JSON value, checked (str keys, finite floats, at
  most ``MAX_JSON_DEPTH`` nested containers) and copied.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import re
import reprlib
import types
from typing import Any, TypeVar, Union, cast, get_args, get_origin, get_type_hints

import torch

T = TypeVar("T")

JSONValue = dict[str, Any] | list[Any] | str | int | float | bool | None
r"""Annotation marker for "any JSON value" (checked recursively by the codec)."""

MAX_JSON_DEPTH = 32
r"""The most containers a ``JSONValue`` may nest."""

_INT_KEY = re.compile(r"-?(?:0|[1-9][0-9]{0,3000})")
_SCALARS = {
    "bool": (bool, "a bool"),
    "str": (str, "a str"),
    "int": (numbers.Integral, "an int"),
    "float": (numbers.Real, "a finite float"),
}
_TENSOR_KEYS = ["dtype", "shape", "data"]
_TENSOR_DTYPES = {"float": torch.float64, "int": torch.long, "bool": torch.bool}


def encode_state(state: Any) -> dict[str, Any]:
    r"""Encode a state dataclass instance as a JSON-safe dict.

    Args:
        state: An instance of a dataclass whose field annotations are supported.

    Returns:
        ``{field name: encoded value}``, accepted by ``json.dumps(..., allow_nan=False)``.
    """
    if isinstance(state, type) or not dataclasses.is_dataclass(state):
        raise TypeError(f"state: expected a dataclass instance, got {_short(state)}.")
    return cast(dict[str, Any], _walk(state, type(state), "state", None))


def decode_state(cls: type[T], data: Any, *, dtype: torch.dtype = torch.float64,
                 device: torch.device | str | None = None, path: str = "state") -> T:
    r"""Rebuild a state dataclass from the output of :func:`encode_state` (after JSON).

    Args:
        cls: The state dataclass type.
        data: The untrusted decoded JSON; it is not modified.
        dtype: The floating dtype of "float" tensors.
        device: The device of all tensors.
        path: The name of ``data`` in error messages, e.g. ``"state['state']"``.

    Returns:
        The ``cls`` instance, after its ``check()`` (if any) passed.
    """
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"cls: expected a dataclass type, got {_short(cls)}.")
    if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise ValueError(f"dtype: expected a floating-point torch.dtype, got {_short(dtype)}.")
    return cast(T, _walk(data, cls, path, (dtype, device)))


def _short(value: Any) -> str:
    try:
        text = reprlib.repr(value)
    except ValueError:  # an int too long to print
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."


def _fail(path: str, expected: str, value: Any) -> ValueError:
    return ValueError(f"{path}: expected {expected}, got {type(value).__name__} {_short(value)}.")


def _key(path: str, name: Any) -> str:
    return f"{path}[{_short(name)}]"


def _has_codec(cls: type) -> bool:
    return callable(getattr(cls, "to_dict", None)) and callable(getattr(cls, "from_dict", None))


def _kind(hint: Any, path: str) -> tuple[str, tuple[Any, ...]]:
    r"""Classify an annotation as (kind, type arguments); ``TypeError`` if unsupported."""
    if hint is Any or hint == JSONValue:
        return "json", ()
    if hint is None or hint is type(None):
        return "none", ()
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType) and len(args) == 2 and type(None) in args:
        return "optional", tuple(a for a in args if a is not type(None))
    if (origin is list and len(args) == 1) or (origin is tuple and len(args) == 2 and args[1] is Ellipsis):
        return origin.__name__, args[:1]
    if origin is dict and len(args) == 2 and args[0] in (str, int):
        return "dict", args
    if origin is None and isinstance(hint, type):
        if hint in (bool, int, float, str):
            return hint.__name__, ()
        if issubclass(hint, torch.Tensor):
            return "tensor", ()
        if _has_codec(hint):
            return "custom", ()
        if dataclasses.is_dataclass(hint):
            return "dataclass", ()
    raise TypeError(f"{path}: unsupported field type {hint!r} (see botorch_unknown_hypers.policies.json_state).")


def _fields(cls: type) -> list[tuple[str, Any, bool]]:
    r"""(name, resolved annotation, required) of the ``init`` fields of a dataclass."""
    try:
        hints = get_type_hints(cls)
    except (NameError, TypeError, AttributeError) as e:
        raise TypeError(f"cannot resolve the field types of {cls.__qualname__}: {e}") from e
    no = dataclasses.MISSING
    return [(f.name, hints[f.name], f.default is no and f.default_factory is no) for f in dataclasses.fields(cls) if f.init]


def _scalar(kind: str, value: Any, path: str) -> Any:
    r"""Check an ``int`` / ``float`` / ``bool`` / ``str`` value; ints and floats are normalised."""
    cls, expected = _SCALARS[kind]
    if not isinstance(value, cls) or (kind in ("int", "float") and isinstance(value, bool)):
        raise _fail(path, expected, value)
    if kind != "float":
        return int(cast(int, value)) if kind == "int" else value
    try:
        out = float(cast(float, value))
    except OverflowError:
        out = math.inf
    if not math.isfinite(out):
        raise _fail(path, expected, value)
    return out


def _json(value: Any, path: str, depth: int = 0) -> Any:
    r"""Check and copy a JSON value (finite floats, str keys, bounded depth)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, float):
        return _scalar("float", value, path)
    if not isinstance(value, (dict, list, tuple)):
        raise _fail(path, "a JSON value", value)
    if depth >= MAX_JSON_DEPTH:
        raise ValueError(f"{path}: expected at most {MAX_JSON_DEPTH} nested JSON containers, got more.")
    if isinstance(value, dict):
        bad = [k for k in value if not isinstance(k, str)]
        if bad:
            raise _fail(f"{path} key", "a str", bad[0])
        return {k: _json(v, _key(path, k), depth + 1) for k, v in value.items()}
    return [_json(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]


def _walk(value: Any, hint: Any, path: str, opts: tuple[torch.dtype, Any] | None) -> Any:
    r"""Encode (``opts is None``) or decode (``opts = (dtype, device)``) ``value`` as ``hint``."""
    kind, args = _kind(hint, path)
    if kind == "json":
        return _json(value, path)
    if value is None and kind in ("none", "optional"):
        return None
    if kind == "none":
        raise _fail(path, "null", value)
    if kind == "optional":
        return _walk(value, args[0], path, opts)
    if kind in _SCALARS:
        return _scalar(kind, value, path)
    if kind in ("list", "tuple"):
        if not isinstance(value, list if opts else (list, tuple)):
            raise _fail(path, "a list", value)
        out = [_walk(v, args[0], f"{path}[{i}]", opts) for i, v in enumerate(value)]
        return tuple(out) if kind == "tuple" and opts else out
    if kind == "dict":
        if not isinstance(value, dict):
            raise _fail(path, "a dict", value)
        return {_dict_key(k, args[0], f"{path} key", opts): _walk(v, args[1], _key(path, k), opts) for k, v in value.items()}
    if opts is None:
        return _encode_object(value, kind, hint, path)
    if not isinstance(value, dict):
        raise _fail(path, "a tensor dict" if kind == "tensor" else "a dict", value)
    if kind == "tensor":
        return _decode_tensor(value, path, *opts)
    if kind == "dataclass":
        return _decode_dataclass(value, hint, path, opts)
    copy = _json(value, path)  # from_dict gets a checked copy: the input stays untouched
    try:
        return hint.from_dict(copy, dtype=opts[0], device=opts[1])
    except (ValueError, TypeError, LookupError, AttributeError, ArithmeticError, RuntimeError) as e:
        raise ValueError(f"{path}: invalid {hint.__qualname__}: {e}") from e


def _dict_key(key: Any, key_type: type, path: str, opts: Any) -> str | int:
    if key_type is str or opts is None:  # str keys; or encoding an int key
        return str(_scalar("int", key, path)) if key_type is int else _scalar("str", key, path)
    if not (isinstance(key, str) and _INT_KEY.fullmatch(key) and key != "-0"):
        raise _fail(path, "a canonical decimal int string", key)
    return int(key)


def _encode_object(value: Any, kind: str, hint: type, path: str) -> dict[str, Any]:
    r"""Encode a tensor, a dataclass or an object with ``to_dict()``."""
    if not isinstance(value, torch.Tensor if kind == "tensor" else hint):
        raise _fail(path, f"a {'torch.Tensor' if kind == 'tensor' else hint.__qualname__}", value)
    if kind == "dataclass":
        return {name: _walk(getattr(value, name), h, _key(path, name), None) for name, h, _ in _fields(hint)}
    if kind == "tensor":
        t = cast(torch.Tensor, value).detach().cpu()
        tag = "bool" if t.dtype == torch.bool else "float" if t.is_floating_point() else "int"
        if t.is_complex():
            raise _fail(path, "a float, int or bool tensor", value)
        if tag == "float" and not bool(torch.isfinite(t).all()):
            raise ValueError(f"{path}: expected finite tensor entries, got NaN or inf (JSON cannot hold them).")
        return {"dtype": tag, "shape": list(t.shape), "data": t.to(_TENSOR_DTYPES[tag]).reshape(-1).tolist()}
    data = _json(cast(Any, value).to_dict(), path)  # an object of ``hint``, checked above
    if not isinstance(data, dict):
        raise _fail(path, f"{type(value).__qualname__}.to_dict() to give a dict", data)
    return data


def _check_keys(data: dict[Any, Any], names: list[str], required: list[str], path: str) -> None:
    for k in data:
        if k not in names:
            raise ValueError(f"{path}: unknown field {_short(k)}; expected fields: {', '.join(names) or 'none'}.")
    for name in required:
        if name not in data:
            raise ValueError(f"{path}: missing field {name!r}.")


def _decode_tensor(data: dict[str, Any], path: str, dtype: torch.dtype, device: Any) -> torch.Tensor:
    _check_keys(data, _TENSOR_KEYS, _TENSOR_KEYS, path)
    tag, shape, flat = data["dtype"], data["shape"], data["data"]
    if not isinstance(tag, str) or tag not in _TENSOR_DTYPES:
        raise _fail(_key(path, "dtype"), "'float', 'int' or 'bool'", tag)
    if not (isinstance(shape, list) and len(shape) <= 64 and all(type(n) is int and 0 <= n < 2**63 for n in shape)):
        raise _fail(_key(path, "shape"), "a list of at most 64 non-negative ints", shape)
    if not isinstance(flat, list):
        raise _fail(_key(path, "data"), "a flat list", flat)
    if math.prod(shape) != len(flat):
        raise ValueError(f"{path}: shape {_short(shape)} does not match the {len(flat)} entries of 'data'.")
    values = _entries(tag, flat, _key(path, "data"))
    bad = next((i for i, v in enumerate(values) if not -(2**63) <= v < 2**63), None) if tag == "int" else None
    if bad is not None:
        raise _fail(f"{_key(path, 'data')}[{bad}]", "an int64", flat[bad])
    try:
        t = torch.tensor(values, dtype=_TENSOR_DTYPES[tag]).reshape(shape)
    except (RuntimeError, ValueError, OverflowError) as e:
        raise ValueError(f"{path}: cannot build a tensor of shape {_short(shape)}: {e}") from e
    if tag == "float":
        t = t.to(dtype)
        if not bool(torch.isfinite(t).all()):
            raise ValueError(f"{path}: expected entries finite in {dtype}, got values that overflow it.")
    return t.to(device)


def _entries(tag: str, flat: list[Any], path: str) -> list[Any]:
    r"""Check the entries of a tensor's "data"; a fast pass first, then one by one to name the bad one."""
    exact = {"float": float, "int": int, "bool": bool}[tag]  # JSON ints for floats take the slow path
    if all(type(x) is exact for x in flat) and (tag != "float" or all(map(math.isfinite, flat))):
        return flat
    return [_scalar(tag, x, f"{path}[{i}]") for i, x in enumerate(flat)]  # the tags are scalar kinds


def _decode_dataclass(data: dict[str, Any], cls: type, path: str, opts: tuple[torch.dtype, Any]) -> Any:
    fields = _fields(cls)
    _check_keys(data, [name for name, _, _ in fields], [name for name, _, req in fields if req], path)
    kwargs = {name: _walk(data[name], h, _key(path, name), opts) for name, h, _ in fields if name in data}
    try:
        obj = cls(**kwargs)
        check = getattr(obj, "check", None)
        if callable(check):
            check()
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from e
    return obj
