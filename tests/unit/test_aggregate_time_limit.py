"""The topic x broker program's solver is never handed a spent time limit: HiGHS refuses a
negative ``time_limit`` (``OptimizeWarning: Invalid option value``), which the suite printed when
the branch-and-bound step started after the deadline had passed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.sparse import csr_array

from kadmin.balance.aggregate import _optimum


def _program(seconds: float) -> object:
    cost = np.array([1.0, 2.0])
    matrix = csr_array(np.array([[1.0, 1.0]]))
    return _optimum(cost, matrix, np.array([1.0]), np.array([1.0]), np.zeros(2), np.ones(2),
                    np.arange(2), seconds)


@pytest.mark.parametrize("seconds", [-0.5, 0.0])
def test_a_spent_deadline_is_out_of_time_without_asking_the_solver(seconds: float) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an OptimizeWarning would fail the test
        assert _program(seconds) is None


def test_time_left_solves() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(np.rint(_program(5.0))) == [1.0, 0.0]


def test_branching_on_some_columns_then_the_simplex_on_the_rest_is_the_integer_optimum() -> None:
    """Branch and bound on the first column alone, the second by the simplex with it fixed:
    the optimum of every column integer (x0 + x1 = 1, x0 - x1 within [-1, 1], x0 costlier)."""
    cost = np.array([3.0, 1.0])
    matrix = csr_array(np.array([[1.0, 1.0], [1.0, -1.0]]))
    x = _optimum(cost, matrix, np.array([1.0, -1.0]), np.array([1.0, 1.0]), np.zeros(2),
                 np.ones(2), np.array([0]), 5.0)
    assert isinstance(x, np.ndarray) and list(np.rint(x)) == [0.0, 1.0]


def test_an_infeasible_relaxation_refutes() -> None:
    cost = np.array([1.0, 1.0])
    matrix = csr_array(np.array([[1.0, 1.0]]))
    assert _optimum(cost, matrix, np.array([3.0]), np.array([3.0]), np.zeros(2), np.ones(2),
                    np.array([0]), 5.0) is False
