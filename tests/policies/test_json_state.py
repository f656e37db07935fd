from __future__ import annotations

import copy
import json
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Optional

import pytest
import torch

from botorch_unknown_hypers.candidates import CandidateSpec, KernelCandidates
from botorch_unknown_hypers.policies.json_state import JSONValue, decode_state, encode_state


@dataclass
class Inner:
    counts: list[int]
    widths: torch.Tensor
    label: str = "inner"

    def check(self) -> None:
        if len(self.counts) != self.widths.numel():
            raise ValueError(f"counts has {len(self.counts)} entries, widths {self.widths.numel()}.")


class Shape(ABC):
    r"""An abstract base whose ``from_dict`` dispatches on the ``kind`` tag (as CandidateSpec does)."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]: ...

    @classmethod
    def from_dict(cls, data: dict[str, Any], dtype: torch.dtype = torch.float64, device: Any = None) -> Shape:
        kinds = {"circle": Circle, "box": Box}
        if data.get("kind") not in kinds:
            raise ValueError(f"kind must be one of {sorted(kinds)}, got {data.get('kind')!r}")
        return kinds[data["kind"]].from_dict(data, dtype=dtype, device=device)


@dataclass
class Circle(Shape):
    radius: float

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "circle", "radius": self.radius}

    @classmethod
    def from_dict(cls, data: dict[str, Any], dtype: torch.dtype = torch.float64, device: Any = None) -> Circle:
        if set(data) != {"kind", "radius"}:
            raise ValueError(f"bad circle keys {sorted(data)}")
        return cls(radius=float(data["radius"]))


@dataclass
class Box(Shape):
    sides: torch.Tensor

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "box", "sides": self.sides.tolist()}

    @classmethod
    def from_dict(cls, data: dict[str, Any], dtype: torch.dtype = torch.float64, device: Any = None) -> Box:
        return cls(sides=torch.tensor(data["sides"], dtype=dtype, device=device))  # KeyError on a missing key


@dataclass
class Everything:
    n: int
    beta: float
    flag: bool
    name: str
    nothing: None
    maybe: float | None
    maybe_old: Optional[int]  # noqa: UP045 (the typing spelling is supported too)
    items: list[float]
    pair: tuple[int, ...]
    by_index: dict[int, str]
    by_name: dict[str, list[int]]
    x: torch.Tensor
    idx: torch.Tensor
    mask: torch.Tensor
    scalar: torch.Tensor
    empty: torch.Tensor
    inner: Inner
    inners: list[Inner]
    shapes: list[Shape]
    box: Box
    extra: JSONValue
    anything: Any
    missing_tensor: torch.Tensor | None = None
    defaulted: list[int] = field(default_factory=lambda: [7])


@dataclass
class Small:
    n: int
    beta: float = 1.0
    counts: dict[int, int] = field(default_factory=dict)
    x: torch.Tensor | None = None
    inner: Inner | None = None
    shape: Shape | None = None
    extra: JSONValue = None


@dataclass
class Unsupported:
    bad: set[int]


def _everything() -> Everything:
    g = torch.Generator().manual_seed(0)
    return Everything(
        n=-3,
        beta=0.1 + 0.2,
        flag=True,
        name="lb-gp-ucb",
        nothing=None,
        maybe=None,
        maybe_old=5,
        items=[1e-300, -0.0, 2.5e300],
        pair=(1, 2, 3),
        by_index={0: "a", -12: "b", 30: "c"},
        by_name={"u": [1, 2], "": []},
        x=torch.randn(3, 4, generator=g, dtype=torch.float64) * 1e-7,
        idx=torch.tensor([[0, -5], [2**62, 3]]),
        mask=torch.tensor([True, False, True]),
        scalar=torch.tensor(torch.pi, dtype=torch.float64),
        empty=torch.empty(0, 3, dtype=torch.float64),
        inner=Inner(counts=[1, 2], widths=torch.tensor([0.5, 0.25], dtype=torch.float64)),
        inners=[Inner(counts=[], widths=torch.zeros(0, dtype=torch.float64), label="e")],
        shapes=[Circle(radius=2.0), Box(sides=torch.tensor([1.0, 2.0], dtype=torch.float64))],
        box=Box(sides=torch.tensor([3.0], dtype=torch.float64)),
        extra={"history": [{"t": 1, "ok": True, "v": 0.5, "note": None}], "tag": "x"},
        anything=[1, "two", 3.0],
    )


def _roundtrip(state: Any, cls: type, **kwargs: Any) -> Any:
    text = json.dumps(encode_state(state), allow_nan=False)
    return decode_state(cls, json.loads(text), **kwargs)


def _assert_tensor_equal(a: torch.Tensor, b: torch.Tensor) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype == torch.float64:  # bitwise, signed zeros included
        a, b = a.view(torch.int64), b.view(torch.int64)
    assert torch.equal(a, b)


def test_round_trip_every_annotation_bitwise():
    state = _everything()
    back = _roundtrip(state, Everything)
    for name in ("x", "idx", "mask", "scalar", "empty"):
        _assert_tensor_equal(getattr(back, name), getattr(state, name))
    assert back.scalar.dim() == 0 and back.empty.shape == (0, 3)
    assert back.idx.dtype == torch.long and back.mask.dtype == torch.bool
    assert back.n == -3 and back.beta == 0.1 + 0.2 and back.flag is True and back.name == "lb-gp-ucb"
    assert back.nothing is None and back.maybe is None and back.maybe_old == 5
    assert back.items == state.items and str(back.items[1]) == "-0.0"
    assert back.pair == (1, 2, 3) and isinstance(back.pair, tuple)
    assert back.by_index == {0: "a", -12: "b", 30: "c"} and back.by_name == {"u": [1, 2], "": []}
    assert back.inner.counts == [1, 2] and back.inner.label == "inner"
    _assert_tensor_equal(back.inner.widths, state.inner.widths)
    assert back.inners[0].label == "e" and back.inners[0].widths.shape == (0,)
    assert isinstance(back.shapes[0], Circle) and back.shapes[0].radius == 2.0
    assert isinstance(back.shapes[1], Box) and back.shapes[1].sides.tolist() == [1.0, 2.0]
    assert isinstance(back.box, Box) and back.box.sides.tolist() == [3.0]
    assert back.extra == state.extra and back.anything == state.anything
    assert back.missing_tensor is None and back.defaulted == [7]


def test_encoding_format_is_plain_json():
    data = encode_state(_everything())
    assert data["idx"] == {"dtype": "int", "shape": [2, 2], "data": [0, -5, 2**62, 3]}
    assert data["mask"] == {"dtype": "bool", "shape": [3], "data": [True, False, True]}
    assert data["scalar"]["shape"] == [] and data["empty"] == {"dtype": "float", "shape": [0, 3], "data": []}
    assert data["by_index"] == {"0": "a", "-12": "b", "30": "c"}
    assert data["pair"] == [1, 2, 3] and data["shapes"][0] == {"kind": "circle", "radius": 2.0}
    assert data["missing_tensor"] is None and data["defaulted"] == [7]


def test_float32_requested_on_decode():
    state = Small(n=1, x=torch.tensor([[0.1, 0.2]], dtype=torch.float64), shape=Box(torch.ones(2, dtype=torch.float64)))
    back = _roundtrip(state, Small, dtype=torch.float32)
    assert back.x.dtype == torch.float32 and torch.equal(back.x, state.x.float())
    assert back.shape.sides.dtype == torch.float32  # dtype reaches from_dict
    # float32 tensors are encoded exactly (via float64)
    f32 = Small(n=1, x=torch.tensor([0.1, 1e-30], dtype=torch.float32))
    assert torch.equal(_roundtrip(f32, Small, dtype=torch.float32).x, f32.x)
    with pytest.raises(ValueError, match=r"state\['x'\]: .*overflow"):
        decode_state(Small, {"n": 1, "x": {"dtype": "float", "shape": [1], "data": [1e300]}}, dtype=torch.float32)
    with pytest.raises(ValueError, match="dtype"):
        decode_state(Small, {"n": 1}, dtype=torch.long)


def test_json_ints_are_accepted_for_floats():
    back = decode_state(Small, {"n": 1, "beta": 2, "x": _tensor("float", [2], [1, 2.5])})
    assert type(back.beta) is float and back.beta == 2.0
    assert back.x.dtype == torch.float64 and back.x.tolist() == [1.0, 2.5]


def test_abstract_base_dispatches_by_type():
    for shape, cls in ((Circle(1.5), Circle), (Box(torch.tensor([2.0], dtype=torch.float64)), Box)):
        back = _roundtrip(Small(n=0, shape=shape), Small)
        assert type(back.shape) is cls
    with pytest.raises(ValueError, match=r"state\['shape'\]: invalid Shape: kind must be one of \['box', 'circle'\], got 'triangle'"):
        decode_state(Small, {"n": 0, "shape": {"kind": "triangle"}})
    with pytest.raises(ValueError, match=r"state\['shape'\]: invalid Shape: kind must be one of \['box', 'circle'\], got None"):
        decode_state(Small, {"n": 0, "shape": {"radius": 1.0}})  # the type tag is missing
    # from_dict's own errors (here a KeyError) become a ValueError naming the path
    with pytest.raises(ValueError, match=r"state\['shape'\]: invalid Shape"):
        decode_state(Small, {"n": 0, "shape": {"kind": "box"}})
    with pytest.raises(ValueError, match=r"state\['shape'\]: invalid Shape: bad circle keys"):
        decode_state(Small, {"n": 0, "shape": {"kind": "circle", "radius": 1.0, "x": 1}})


@dataclass
class WithCandidates:
    candidates: CandidateSpec | None = None


def test_candidate_sets_round_trip_through_their_family():
    spec = KernelCandidates.from_lengthscales(torch.tensor([0.5, 0.25], dtype=torch.float64), noise=1e-4)
    back = _roundtrip(WithCandidates(spec), WithCandidates).candidates
    assert type(back) is KernelCandidates and torch.equal(back.lengthscale, spec.lengthscale)
    with pytest.raises(ValueError, match=r"state\['candidates'\]: invalid CandidateSpec.*'nope'"):
        decode_state(WithCandidates, {"candidates": {"type": "nope"}})


def _tensor(dtype: str, shape: Any, data: Any) -> dict[str, Any]:
    return {"dtype": dtype, "shape": shape, "data": data}


NAN, INF = float("nan"), float("inf")
BAD = {
    "unknown field": ({"n": 1, "x_": 1}, r"state: unknown field 'x_'"),
    "unknown nested field": ({"n": 1, "inner": {"counts": [], "widths": _tensor("float", [0], []), "z": 1}},
                             r"state\['inner'\]: unknown field 'z'"),
    "missing field": ({"beta": 1.0}, r"state: missing field 'n'"),
    "missing nested field": ({"n": 1, "inner": {"counts": []}}, r"state\['inner'\]: missing field 'widths'"),
    "bool for int": ({"n": True}, r"state\['n'\]: expected an int, got bool True"),
    "float for int": ({"n": 1.0}, r"state\['n'\]: expected an int, got float"),
    "str for float": ({"n": 1, "beta": "0.5"}, r"state\['beta'\]: expected a finite float, got str '0.5'"),
    "nan float": ({"n": 1, "beta": NAN}, r"state\['beta'\]: expected a finite float, got float nan"),
    "inf float": ({"n": 1, "beta": -INF}, r"state\['beta'\]: expected a finite float"),
    "huge int for float": ({"n": 1, "beta": 10**400}, r"state\['beta'\]: expected a finite float"),
    "nan in tensor": ({"n": 1, "x": _tensor("float", [2], [0.0, NAN])}, r"state\['x'\]\['data'\]\[1\]"),
    "inf in tensor": ({"n": 1, "x": _tensor("float", [1], [INF])}, r"state\['x'\]\['data'\]\[0\]"),
    "str in tensor": ({"n": 1, "x": _tensor("float", [1], ["1"])}, r"state\['x'\]\['data'\]\[0\]"),
    "bool in int tensor": ({"n": 1, "x": _tensor("int", [1], [True])}, r"state\['x'\]\['data'\]\[0\]"),
    "int in bool tensor": ({"n": 1, "x": _tensor("bool", [1], [1])}, r"state\['x'\]\['data'\]\[0\]"),
    "int64 overflow": ({"n": 1, "x": _tensor("int", [1], [2**63])}, r"state\['x'\]\['data'\]\[0\]: expected an int64"),
    "nested tensor data": ({"n": 1, "x": _tensor("float", [1, 1], [[1.0]])}, r"state\['x'\]\['data'\]\[0\]"),
    "huge int in tensor": ({"n": 1, "x": _tensor("float", [2], [1.0, 10**400])}, r"state\['x'\]\['data'\]\[1\]: expected a finite"),
    "shape mismatch": ({"n": 1, "x": _tensor("float", [2, 2], [1.0, 2.0])}, r"state\['x'\]: shape \[2, 2\] does not match"),
    "negative shape": ({"n": 1, "x": _tensor("float", [-1], [])}, r"state\['x'\]\['shape'\]"),
    "bad dtype tag": ({"n": 1, "x": _tensor("float64", [0], [])}, r"state\['x'\]\['dtype'\]: expected 'float', 'int' or 'bool'"),
    "tensor extra key": ({"n": 1, "x": {**_tensor("int", [0], []), "device": "cuda"}}, r"state\['x'\]: unknown field 'device'"),
    "tensor missing key": ({"n": 1, "x": {"dtype": "int", "data": []}}, r"state\['x'\]: missing field 'shape'"),
    "list for tensor": ({"n": 1, "x": [1.0]}, r"state\['x'\]: expected a tensor dict, got list"),
    "non-canonical key 01": ({"n": 1, "counts": {"01": 1}}, r"state\['counts'\] key: expected a canonical decimal int"),
    "non-int key": ({"n": 1, "counts": {"x": 1}}, r"state\['counts'\] key: .*'x'"),
    "huge int key": ({"n": 1, "counts": {"1" * 5000: 1}}, r"state\['counts'\] key: expected a canonical"),
    "minus zero key": ({"n": 1, "counts": {"-0": 1}}, r"state\['counts'\] key"),
    "list for dict": ({"n": 1, "counts": [1, 2]}, r"state\['counts'\]: expected a dict, got list"),
    "bad dict value": ({"n": 1, "counts": {"3": "a"}}, r"state\['counts'\]\['3'\]: expected an int, got str"),
    "list item": ({"n": 1, "inner": {"counts": [1, "2"], "widths": _tensor("float", [2], [0.0, 1.0])}},
                  r"state\['inner'\]\['counts'\]\[1\]: expected an int"),
    "not a dict": ([1, 2], r"state: expected a dict, got list"),
    "too deep JSONValue": ({"n": 1, "extra": json.loads("[" * 33 + "]" * 33)}, r"state\['extra'\](\[0\])+: expected at most 32"),
    "nan in JSONValue": ({"n": 1, "extra": {"a": [NAN]}}, r"state\['extra'\]\['a'\]\[0\]: expected a finite float"),
    "non-JSON in JSONValue": ({"n": 1, "extra": {"a": {1, 2}}}, r"state\['extra'\]\['a'\]: expected a JSON value, got set"),
    "check fails": ({"n": 1, "inner": {"counts": [1], "widths": _tensor("float", [0], [])}},
                    r"state\['inner'\]: counts has 1 entries, widths 0"),
}


@pytest.mark.parametrize("data, pattern", list(BAD.values()), ids=list(BAD))
def test_malformed_input_names_the_path(data: Any, pattern: str):
    before = copy.deepcopy(data)
    with pytest.raises(ValueError, match=pattern):
        decode_state(Small, data)
    assert _same(data, before)


def test_path_argument_is_the_root():
    with pytest.raises(ValueError, match=r"^state\['state'\]\['counts'\]: unknown field 'x'"):
        decode_state(Inner, {"counts": [], "widths": _tensor("float", [0], []), "x": 1}, path="state['state']['counts']")
    with pytest.raises(ValueError, match=r"state\['state'\]\['n'\]"):
        decode_state(Small, {"n": "1"}, path="state['state']")


def test_deep_json_value_at_the_limit_is_accepted():
    deep = json.loads("[" * 32 + "]" * 32)
    assert decode_state(Small, {"n": 1, "extra": deep}).extra == deep


def test_long_values_are_truncated_in_messages():
    with pytest.raises(ValueError) as info:
        decode_state(Small, {"n": "x" * 10_000})
    assert len(str(info.value)) < 150
    with pytest.raises(ValueError, match=r"state\['n'\]: expected an int"):
        decode_state(Small, {"n": [10**5000]})  # an int too long to repr


def test_encode_rejects_non_finite_and_mistyped_values():
    with pytest.raises(ValueError, match=r"state\['beta'\]: expected a finite float, got float nan"):
        encode_state(Small(n=1, beta=NAN))
    with pytest.raises(ValueError, match=r"state\['x'\]: expected finite tensor entries"):
        encode_state(Small(n=1, x=torch.tensor([1.0, INF])))
    with pytest.raises(ValueError, match=r"state\['extra'\]\['a'\]"):
        encode_state(Small(n=1, extra={"a": INF}))
    with pytest.raises(ValueError, match=r"state\['n'\]: expected an int, got bool"):
        encode_state(Small(n=True))
    with pytest.raises(ValueError, match=r"state\['counts'\] key: expected an int"):
        encode_state(Small(n=1, counts={"1": 1}))
    with pytest.raises(TypeError, match="dataclass instance"):
        encode_state({"n": 1})


def test_unsupported_annotation_is_a_type_error():
    with pytest.raises(TypeError, match=r"state\['bad'\]: unsupported field type"):
        encode_state(Unsupported(bad={1}))
    with pytest.raises(TypeError, match=r"state\['bad'\]: unsupported field type"):
        decode_state(Unsupported, {"bad": [1]})
    with pytest.raises(TypeError, match="dataclass type"):
        decode_state(dict, {})


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_tensors_round_trip():
    state = Small(n=1, x=torch.tensor([0.1, -2.0], dtype=torch.float64, device="cuda"))
    back = _roundtrip(state, Small, device="cuda")
    assert back.x.is_cuda and torch.equal(back.x, state.x)
    assert _roundtrip(state, Small).x.device.type == "cpu"


def test_decode_does_not_modify_its_input():
    data = json.loads(json.dumps(encode_state(_everything())))
    before = copy.deepcopy(data)
    decode_state(Everything, data)
    assert data == before
    back = decode_state(Everything, data)
    back.extra["history"].append(1)  # the JSONValue is a copy
    assert data == before


def _same(a: Any, b: Any) -> bool:
    r"""Equality that treats NaN as equal to NaN (the malformed inputs contain some)."""
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    return a == b
