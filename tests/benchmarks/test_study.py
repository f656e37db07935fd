import warnings

import pytest
from gpytorch.utils.warnings import NumericalWarning

from botorch_unknown_hypers.benchmarks.study import counted_warnings, parse_ids


def test_counted_warnings_counts_every_occurrence_by_category_and_prints_none(capsys, recwarn):
    with counted_warnings() as counts:
        for _ in range(3):
            warnings.warn("jitter added", NumericalWarning)  # one place, three times: each counts
        warnings.warn("search failed", RuntimeWarning)
        with warnings.catch_warnings():  # a filter set inside the block acts as before
            warnings.simplefilter("ignore", UserWarning)
            warnings.warn("hidden", UserWarning)
        assert not counts  # filled when the block ends
    assert counts == {"NumericalWarning": 3, "RuntimeWarning": 1}
    assert capsys.readouterr() == ("", "") and len(recwarn) == 0  # nothing printed, nothing passed on
    with pytest.raises(ZeroDivisionError):
        with counted_warnings() as failed:
            warnings.warn("before the error", NumericalWarning)
            1 / 0
    assert failed == {"NumericalWarning": 1}  # counted although the run raised
    warnings.simplefilter("error", RuntimeWarning)  # the filters outside are restored after the block
    with pytest.raises(RuntimeWarning):
        warnings.warn("outside", RuntimeWarning)


def test_parse_ids_reads_ranges_and_lists_and_refuses_the_rest():
    assert parse_ids("0-3") == [0, 1, 2, 3] and parse_ids("1-3,7") == [1, 2, 3, 7] and parse_ids("5") == [5]
    for bad in ("a", "3-1", "1-", ""):
        with pytest.raises(ValueError, match="ids"):
            parse_ids(bad)
