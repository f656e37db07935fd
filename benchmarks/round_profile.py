r"""What one round of a rule waits on and holds: synchronising calls, peak memory, time.

A **round** is one ``policy.suggest(X, Y, q)`` on the ``n`` observations so far, the evaluation
of the suggested points on Michalewicz-5 (d = 5, inputs uniform in its box) and
``policy.observe`` of their values. Every rule first runs one untimed round on the same data
(the factorisation of every candidate, a campaign's one-off setup), and only the next round is
measured. Three measurements:

1. **Synchronising calls per round** (``--n``, default 500): one round of each of ``lb-gp-ucb``,
   ``he-gp-ucb`` (16 Matern-5/2 candidates, length scales log-spaced in [0.05, 1], noise 1e-4),
   ``ts-rsr`` (q = 10, fixed Matern-5/2 surrogate of length scale 0.2 box widths, noise 1e-6)
   the ``lb-gp-ucb-auto`` / ``he-gp-ucb-auto`` presets, ``auto`` and BoTorch's own loop
   ``qlognei`` (both refit BoTorch's MAP model every round) under ``torch.profiler``, counting
   the operators that read a device value on the host: ``aten::_local_scalar_dense`` (what
   ``.item()``, ``float()``, ``int()`` and ``bool()`` of a tensor run), ``aten::item``,
   ``aten::equal`` (``torch.equal``; GPyTorch's ``Kernel.__call__`` compares its inputs with
   it) and ``aten::is_nonzero`` (``bool()`` / ``if tensor:``); on CUDA also the device-to-host
   copies (``Memcpy DtoH`` kernels) and ``cudaStreamSynchronize`` / ``cudaDeviceSynchronize``
   calls. ``Tensor.tolist()`` and ``Tensor.numpy()`` copy a tensor to the host without any of
   these ops (on CUDA they are device-to-host copies); they are counted by wrapping the two
   methods during the round (``tolist`` column). The ops nest (``item`` and ``is_nonzero`` call
   ``_local_scalar_dense``), so two totals are printed: ``sum`` of ``_local_scalar_dense + equal
   + is_nonzero + tolist`` and ``outer``, the calls of the four ops not made from inside another
   of them plus the ``tolist`` calls (the host round trips, one per wait). ``objective`` is the
   part of ``outer`` made while the problem evaluates the suggested points (BoTorch's test
   functions check their inputs), ``rule`` the rest: the waits of ``suggest`` and ``observe``.
2. **Peak memory of one HE round** at ``--he-n`` (default 4000) with ``--he-k`` (16)
   candidates, in a fresh process: on CPU the peak resident set (``VmHWM``, reset through
   ``/proc/self/clear_refs`` after the warm round) above the resident set measured before the
   policy's first round (data generated, libraries loaded), against the bytes of the K dense
   ``n x n`` float64 factors, :math:`8Kn^2`; on CUDA ``torch.cuda.max_memory_allocated`` above
   the allocation before the first round. The warm (first) round's peak is printed too.
3. **Round time against one batched Cholesky** in that same process: the measured HE round
   against ``torch.linalg.cholesky`` of the ``K x n x n`` matrices
   :math:`k_u(X, X) + s I` of the same candidates on the same unit-cube inputs.

4. **Bytes copied by one HE round** (``--copies N [N ...]``, K = ``--he-k``, each ``n`` in a fresh
   process): the bytes written by ``aten::copy_`` (its destination) and ``aten::cat`` (its output)
   in one warm round, split into the factors' upkeep (inside ``RoundContext.candidate_factor_sets``,
   which appends the round's row to every candidate's factor and its fixed raw points' solves)
   and the rest (the acquisition's evaluations), against the factors' :math:`8Kn^2` bytes.
   Doubling ``n`` should about double the upkeep's bytes (:math:`O(Kn)` per appended row),
   not quadruple them.

``--sites`` also lists where the reads of one more warm round are made: each read's innermost
frame in the package or this script (the objective), with the operation. On CPU the reads are
found by wrapping ``Tensor.item``, ``tolist``, ``__float__``, ``__int__``, ``__bool__``,
``__index__``, ``numpy`` and ``torch.equal`` (reads made inside torch's C++, a 0-d tensor used as
an index for one, are not seen); on CUDA by ``torch.cuda.set_sync_debug_mode("warn")``, which
reports every synchronisation, the host's waits for copies *to* the device included.

Usage::

    OMP_NUM_THREADS=2 python benchmarks/round_profile.py --threads 2
    python benchmarks/round_profile.py --quick            # n = 40 / 120: a smoke test
    python benchmarks/round_profile.py --searches scipy torch --skip-he-round   # both refinements
    python benchmarks/round_profile.py --device cuda --threads 16
    python benchmarks/round_profile.py --skip-he-round --methods he-gp-ucb --copies 1000 2000
    python benchmarks/round_profile.py --skip-he-round --searches torch --methods candidate-set

``--methods candidate-set`` profiles every rule on the one candidate-set round that runs on a box,
both presets included; the prior-selection rules (``pe-gp-ts``, ``pe-gp-ucb``, ``hp-gp-ts``,
``map-gp-ts``) take HE's 16 candidates as their priors.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import subprocess
import sys
import time
from collections import Counter

METHODS = ("lb-gp-ucb", "he-gp-ucb", "ts-rsr", "lb-gp-ucb-auto", "he-gp-ucb-auto", "auto", "qlognei")
PRIOR_RULES = ("pe-gp-ts", "pe-gp-ucb", "hp-gp-ts", "map-gp-ts")
CANDIDATE_SET_RULES = (
    "lb-gp-ucb", "a-gp-ucb", "lnb-gp-ucb", "hb-gp-ucb", "he-gp-ucb", "mle-candidates", "expected-ucb",
    "pe-gp-ts", "pe-gp-ucb", "lb-gp-ucb-auto", "he-gp-ucb-auto",
)
r"""The rules on the one candidate-set round that run on a box (``--methods candidate-set``; the
StableOpt rules need a pool, the oracles a prior-selection task), the two presets included."""
CHOICES = tuple(dict.fromkeys((*METHODS, *CANDIDATE_SET_RULES, *PRIOR_RULES)))
SYNC_OPS = ("aten::_local_scalar_dense", "aten::item", "aten::equal", "aten::is_nonzero")
SUMMED_OPS = ("aten::_local_scalar_dense", "aten::equal", "aten::is_nonzero")
CUDA_SYNCS = ("Memcpy DtoH", "cudaStreamSynchronize", "cudaDeviceSynchronize")
HE_K = 16
TS_RSR_Q = 10
QUICK = {"n": 40, "he_n": 120}
OBJECTIVE = "objective"


def he_lengthscales(k: int):
    import torch

    return torch.logspace(math.log10(0.05), 0.0, k, dtype=torch.float64)


def build(method: str, n: int, device_name: str, seed: int = 0, he_k: int = HE_K, search: str = "scipy"):
    r"""``(problem, X, Y, policy, q)``: ``n`` uniform observations of Michalewicz-5 and a fresh policy
    whose box maximisations refine their restarts with ``search``."""
    import torch

    from botorch_unknown_hypers.candidates import KernelCandidates
    from botorch_unknown_hypers.policies.registry import make_policy
    from botorch_unknown_hypers.problems.problem_registry import get_problem

    device = torch.device(device_name)
    problem = get_problem("michalewicz5").to(device=device)
    domain = problem.domain
    gen = torch.Generator().manual_seed(seed)
    unit = torch.rand(n, domain.dim, generator=gen, dtype=torch.float64).to(device)
    X = domain.bounds[0] + (domain.bounds[1] - domain.bounds[0]) * unit
    Y = problem.evaluate(X)[0].reshape(-1, 1)
    options = {}
    if method == "he-gp-ucb":
        options["candidates"] = KernelCandidates.from_lengthscales(he_lengthscales(he_k), noise=1e-4)
    elif method in PRIOR_RULES:  # HE's candidates as the K priors
        options["priors"] = KernelCandidates.from_lengthscales(he_lengthscales(he_k), noise=1e-4)
    elif method == "ts-rsr":
        width = (domain.bounds[1] - domain.bounds[0]).tolist()
        spec = {"kernel": "matern52", "lengthscale": [0.2 * w for w in width], "outputscale": 1.0, "noise_variance": 1e-6}
        options.update(surrogate="paper", surrogate_spec=spec)
    policy = make_policy(method, domain, seed=seed, device=device, search=search, **options)
    return problem, X, Y, policy, TS_RSR_Q if method == "ts-rsr" else 1


def one_round(problem, policy, X, Y, q: int, state: dict | None = None):
    r"""``suggest`` + evaluate + ``observe``; the data grown by the round's points.

    The evaluation runs under the profiler label ``objective``, and ``state["objective"]`` (when
    ``state`` is given) is true while it runs, so that the objective's own reads can be told apart
    from the rule's."""
    import torch

    x = policy.suggest(X, Y, q=q)
    if state is not None:
        state["objective"] = True
    try:
        with torch.profiler.record_function(OBJECTIVE):
            y = problem.evaluate(x)[0].reshape(-1, 1)
    finally:
        if state is not None:
            state["objective"] = False
    policy.observe(x, y)
    return torch.cat([X, x]), torch.cat([Y, y])


def count_syncs(events) -> dict[str, int]:
    r"""Counts of the synchronising ops among profiler ``events`` (see the module docstring)."""
    counts = Counter()
    for event in events:
        name = event.name
        if name in SYNC_OPS:
            counts[name] += 1
            parent, objective = event.cpu_parent, False
            while parent is not None and parent.name not in SYNC_OPS:
                objective |= parent.name == OBJECTIVE
                parent = parent.cpu_parent
            counts["outer"] += parent is None
            counts[OBJECTIVE] += parent is None and objective
        for marker in CUDA_SYNCS:
            if marker in name:
                counts[marker] += 1
    out = {name: counts[name] for name in (*SYNC_OPS, *CUDA_SYNCS)}
    out["sum"] = sum(counts[name] for name in SUMMED_OPS)
    out["outer"] = counts["outer"]
    out[OBJECTIVE] = counts[OBJECTIVE]
    return out


def profile_round(method: str, n: int, device_name: str, seed: int = 0, search: str = "scipy") -> dict:
    r"""Synchronising ops of one warm round of ``method`` at ``n`` observations, and its wall time."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    problem, X, Y, policy, q = build(method, n, device_name, seed, search=search)
    X, Y = one_round(problem, policy, X, Y, q)  # warm: one-off setup
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device_name == "cuda" else [])
    copies = {"n": 0, OBJECTIVE: 0}
    state = {OBJECTIVE: False}
    to_list, to_numpy = torch.Tensor.tolist, torch.Tensor.numpy

    def counted(original):
        def call(self, *args, **kwargs):
            copies["n"] += 1
            copies[OBJECTIVE] += state[OBJECTIVE]
            return original(self, *args, **kwargs)

        return call

    start = time.perf_counter()
    torch.Tensor.tolist, torch.Tensor.numpy = counted(to_list), counted(to_numpy)
    try:
        with profile(activities=activities) as prof:
            one_round(problem, policy, X, Y, q, state)
            if device_name == "cuda":
                torch.cuda.synchronize()
    finally:
        torch.Tensor.tolist, torch.Tensor.numpy = to_list, to_numpy
    seconds = time.perf_counter() - start
    counts = count_syncs(prof.events())
    counts["tolist"] = copies["n"]
    counts["sum"] += copies["n"]
    counts["outer"] += copies["n"]
    counts[OBJECTIVE] += copies[OBJECTIVE]
    counts["rule"] = counts["outer"] - counts[OBJECTIVE]
    return {"method": method, "search": search, "n": n, "seconds": seconds, **counts}


READ_METHODS = ("item", "tolist", "__float__", "__int__", "__bool__", "__index__", "numpy")
PACKAGE_MARKERS = ("botorch_unknown_hypers", "round_profile")


def _site(stack: list) -> str:
    r"""``file:line function`` of the innermost frame in the package or this script (the objective's
    caller), else of the innermost frame; paths from the package's or site-packages' root."""
    frames = [f for f in stack if "warnings" not in f.filename and (f.name == "one_round" or not f.filename.endswith("round_profile.py"))]
    ours = [f for f in frames if any(m in f.filename for m in PACKAGE_MARKERS)]
    frame = (ours or frames)[-1]
    path = frame.filename
    for root in ("site-packages/", "botorch_unknown_hypers/", "benchmarks/"):
        if root in path:
            path = (root if root != "site-packages/" else "") + path.split(root, 1)[1]
            break
    return f"{path}:{frame.lineno} {frame.name}"


def read_sites(method: str, n: int, device_name: str, seed: int = 0, search: str = "scipy") -> list[list]:
    r"""``[count, operation, site]`` of the host reads (CPU) or synchronisations (CUDA) of one warm
    round of ``method`` (see the module docstring), most frequent first."""
    import traceback
    import warnings

    import torch

    problem, X, Y, policy, q = build(method, n, device_name, seed, search=search)
    X, Y = one_round(problem, policy, X, Y, q)  # warm: one-off setup
    sites: Counter = Counter()
    if device_name == "cuda":
        torch.cuda.synchronize()

        def show(message, category, filename, lineno, file=None, line=None):
            if "synchroniz" in str(message):
                sites[("sync", _site(traceback.extract_stack()[:-1]))] += 1

        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = show
            torch.cuda.set_sync_debug_mode("warn")
            try:
                one_round(problem, policy, X, Y, q)
            finally:
                torch.cuda.set_sync_debug_mode(0)
    else:
        originals = {name: getattr(torch.Tensor, name) for name in READ_METHODS}
        equal = torch.equal
        inside = [False]  # a read made inside another (tolist calling __index__, ...) counts once

        def counted(name, original):
            def call(*args, **kwargs):
                if inside[0]:
                    return original(*args, **kwargs)
                sites[(name, _site(traceback.extract_stack()[:-1]))] += 1
                inside[0] = True
                try:
                    return original(*args, **kwargs)
                finally:
                    inside[0] = False

            return call

        for name, original in originals.items():
            setattr(torch.Tensor, name, counted(name, original))
        torch.equal = counted("equal", equal)
        try:
            one_round(problem, policy, X, Y, q)
        finally:
            for name, original in originals.items():
                setattr(torch.Tensor, name, original)
            torch.equal = equal
    return [[count, op, site] for (op, site), count in sites.most_common()]


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}.")


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def he_round(n: int, k: int, device_name: str, seed: int = 0, search: str = "scipy") -> dict:
    r"""Peak memory and time of one warm HE round with ``k`` candidates at ``n`` observations, and
    the time of one batched Cholesky of the same ``k x n x n`` matrices (run in a fresh process)."""
    import torch

    cuda = device_name == "cuda"

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    def used() -> int:  # bytes: allocated on CUDA, resident on CPU
        return torch.cuda.memory_allocated() if cuda else 1024 * _status_kib("VmRSS")

    def peak() -> int:
        return torch.cuda.max_memory_allocated() if cuda else 1024 * _status_kib("VmHWM")

    problem, X, Y, policy, q = build("he-gp-ucb", n, device_name, seed, he_k=k, search=search)
    sync()
    baseline = used()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    X, Y = one_round(problem, policy, X, Y, q)
    sync()
    warm_seconds, warm_peak = time.perf_counter() - start, peak()
    after_warm = used()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
        reset = True
    else:
        reset = _reset_peak_rss()
    start = time.perf_counter()
    one_round(problem, policy, X, Y, q)
    sync()
    seconds, round_peak = time.perf_counter() - start, peak()
    factor_bytes = 8 * k * n * n
    del policy
    # one batched Cholesky of the same candidates' matrices on the same unit-cube inputs
    from gpytorch.kernels import MaternKernel

    unit = (X[:n] - problem.domain.bounds[0]) / (problem.domain.bounds[1] - problem.domain.bounds[0])
    kernel = MaternKernel(nu=2.5, batch_shape=torch.Size([k])).to(unit)
    kernel.lengthscale = he_lengthscales(k).to(unit).view(k, 1, 1)
    with torch.no_grad():
        A = kernel(unit).to_dense()
        A.diagonal(dim1=-2, dim2=-1).add_(1e-4)
        sync()
        start = time.perf_counter()
        torch.linalg.cholesky(A)
        sync()
        cholesky_seconds = time.perf_counter() - start
    return {
        "n": n,
        "k": k,
        "search": search,
        "factor_bytes": factor_bytes,
        "baseline_bytes": baseline,
        "after_warm_bytes": after_warm,
        "warm_peak_above_baseline": warm_peak - baseline,
        "peak_above_baseline": round_peak - baseline,
        "peak_reset": reset,
        "peak_ratio": (round_peak - baseline) / factor_bytes,
        "warm_seconds": warm_seconds,
        "round_seconds": seconds,
        "cholesky_seconds": cholesky_seconds,
        "cholesky_ratio": seconds / cholesky_seconds,
    }


UPKEEP = "factor upkeep"
r"""Profiler label of :func:`copied_bytes`' factor upkeep."""


def copied_bytes(n: int, k: int, device_name: str, seed: int = 0, search: str = "scipy") -> dict:
    r"""Bytes written by ``aten::copy_`` and ``aten::cat`` in one warm HE round with ``k``
    candidates at ``n`` observations: ``upkeep`` within ``RoundContext.candidate_factor_sets`` (wrapped
    in this process under the label :data:`UPKEEP`) and ``rest``, with the factors' bytes."""
    from torch.profiler import ProfilerActivity, profile, record_function

    from botorch_unknown_hypers.policies.context import RoundContext

    problem, X, Y, policy, q = build("he-gp-ucb", n, device_name, seed, he_k=k, search=search)
    X, Y = one_round(problem, policy, X, Y, q)
    factor_sets = RoundContext.candidate_factor_sets

    def labelled(self, *args, **kwargs):
        with record_function(UPKEEP):
            return factor_sets(self, *args, **kwargs)

    RoundContext.candidate_factor_sets = labelled
    try:
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True) as prof:
            one_round(problem, policy, X, Y, q)
    finally:
        RoundContext.candidate_factor_sets = factor_sets
    out = {"n": n, "k": k, "upkeep": 0, "rest": 0, "factor_bytes": 8 * k * n * n}
    for event in prof.events():
        if event.name == "aten::copy_":  # the destination's bytes (float64 in these rounds)
            shape = event.input_shapes[0] if event.input_shapes else []
            written = 8 * math.prod(shape) if shape else 0
        elif event.name == "aten::cat":  # its output, the memory it allocates
            written = max(event.cpu_memory_usage, 0)
        else:
            continue
        parent = event.cpu_parent
        while parent is not None and parent.name != UPKEEP:
            parent = parent.cpu_parent
        out["upkeep" if parent is not None else "rest"] += written
    return out


def child(fn: str, threads: int, **kwargs) -> dict:
    r"""``fn(**kwargs)`` of this script in a fresh interpreter (its own peak memory and caches)."""
    code = (
        "import json, runpy, sys, torch;"
        "torch.set_num_threads(int(sys.argv[2]));"
        "r = runpy.run_path(sys.argv[1]);"
        "print('RESULT ' + json.dumps(r[sys.argv[3]](**json.loads(sys.argv[4]))))"
    )
    from pathlib import Path

    argv = [sys.executable, "-c", code, str(Path(__file__).resolve()), str(threads), fn, json.dumps(kwargs)]
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    raise RuntimeError(f"{fn}({kwargs}) failed:\n{out.stderr[-3000:]}")


def gib(value: float) -> str:
    return f"{value / 2**30:.2f} GiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads in every measurement")
    parser.add_argument("--n", type=int, default=500, help="observations of the profiled rounds")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=(*CHOICES, "candidate-set"),
                        help="rules to profile; 'candidate-set': every rule of CANDIDATE_SET_RULES")
    parser.add_argument("--he-n", type=int, default=4000, help="observations of the HE memory / time round")
    parser.add_argument("--he-k", type=int, default=HE_K, help="candidates of the HE memory / time round")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--searches", nargs="+", default=["scipy"], choices=["scipy", "torch"],
                        help="refinements of the box maximisations to profile (the policies' search option)")
    parser.add_argument("--skip-he-round", action="store_true", help="only the synchronising counts")
    parser.add_argument("--sites", action="store_true", help="also list where each method's reads (CPU) or syncs (CUDA) are made")
    parser.add_argument("--quick", action="store_true", help=f"smoke test: n = {QUICK['n']}, HE round at n = {QUICK['he_n']}")
    parser.add_argument("--copies", type=int, nargs="+", default=[], metavar="N",
                        help="bytes copied by one warm HE round at each of these n (CPU)")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args()
    if args.quick:
        args.n, args.he_n = QUICK["n"], QUICK["he_n"]
    args.methods = list(dict.fromkeys(m for name in args.methods for m in (CANDIDATE_SET_RULES if name == "candidate-set" else (name,))))
    for name in ("threads", "n", "he_n", "he_k"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}.")
    if any(n < 2 for n in args.copies):
        parser.error(f"--copies: every n must be >= 2, got {args.copies}.")
    import torch

    load = open("/proc/loadavg").read().split()[:3] if sys.platform.startswith("linux") else ["?"] * 3
    print(f"machine: {platform.machine()} {platform.processor()}, torch {torch.__version__}, device {args.device}, "
          f"threads {args.threads}, float64, Michalewicz-5, load average {' '.join(load)}")
    rows = []
    print(f"\nsynchronising ops in one warm round at n = {args.n} (torch.profiler)")
    header = ["method", "search", "s / round", *SYNC_OPS, "tolist", *(CUDA_SYNCS if args.device == "cuda" else ()), "sum", "outer", "objective", "rule"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for method in args.methods:
        for search in args.searches:
            row = child(
                "profile_round", args.threads, method=method, n=args.n, device_name=args.device, seed=args.seed, search=search
            )
            rows.append(row)
            cells = [method, search, f"{row['seconds']:.3f}", *(str(row[op]) for op in SYNC_OPS), str(row["tolist"])]
            cells += [str(row[m]) for m in CUDA_SYNCS] if args.device == "cuda" else []
            cells += [str(row[key]) for key in ("sum", "outer", OBJECTIVE, "rule")]
            print("| " + " | ".join(cells) + " |", flush=True)
    he = []
    for search in [] if args.skip_he_round else args.searches:
        he.append(child("he_round", args.threads, n=args.he_n, k=args.he_k, device_name=args.device, seed=args.seed, search=search))
    what = "allocated" if args.device == "cuda" else "resident"
    for r in he:
        print(f"\nHE round at n = {r['n']}, K = {r['k']}, search {r['search']} (fresh process)")
        print(f"factors {gib(r['factor_bytes'])} (8 K n^2); peak {what} above baseline {gib(r['peak_above_baseline'])} "
              f"= {r['peak_ratio']:.2f}x the factors (warm round {gib(r['warm_peak_above_baseline'])}; "
              f"baseline {gib(r['baseline_bytes'])}, after the warm round {gib(r['after_warm_bytes'])}"
              + ("" if r["peak_reset"] else "; peak NOT reset after the warm round: it includes the warm round") + ")")
        print(f"round {r['round_seconds']:.2f} s, one batched Cholesky of the {r['k']} matrices {r['cholesky_seconds']:.2f} s: "
              f"ratio {r['cholesky_ratio']:.2f}x (warm round {r['warm_seconds']:.2f} s)")
    copies = [child("copied_bytes", args.threads, n=n, k=args.he_k, device_name="cpu", seed=args.seed, search=args.searches[0])
              for n in args.copies]
    if copies:
        print(f"\nbytes written by aten::copy_ and aten::cat in one warm HE round, K = {args.he_k}, {args.searches[0]} search (CPU)")
        print("| n | factor upkeep | rest of the round | factors (8 K n^2) | upkeep / factors |")
        print("|---|---|---|---|---|")
        for c in copies:
            print(f"| {c['n']} | {c['upkeep'] / 2**20:.2f} MiB | {c['rest'] / 2**20:.2f} MiB | {c['factor_bytes'] / 2**20:.0f} MiB "
                  f"| {c['upkeep'] / c['factor_bytes']:.4f} |", flush=True)
    sites = {}
    for method in args.methods if args.sites else []:
        for search in args.searches:
            found = child("read_sites", args.threads, method=method, n=args.n, device_name=args.device, seed=args.seed, search=search)
            sites[f"{method} {search}"] = found
            print(f"\n{'syncs' if args.device == 'cuda' else 'host reads'} of one warm round of {method} ({search} search), "
                  f"{sum(c for c, _, _ in found)} in all, by call site:")
            for count, op, site in found:
                print(f"{count:5d}  {op:10s} {site}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"args": vars(args), "load": load, "rounds": rows, "he_rounds": he, "copies": copies, "sites": sites}, fh, indent=1)


if __name__ == "__main__":
    main()
