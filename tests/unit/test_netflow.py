"""The min-cost flow of :mod:`kadmin.balance.netflow` held to HiGHS's integer program on random
network programs: the same feasibility and the same optimum, whatever rows are negated,
columns fixed, single-entry rows added or rows summed into a total; and None, never a wrong
answer, where the program is not a network."""

from __future__ import annotations

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import csr_array

from kadmin.balance.netflow import Total, min_cost

Program = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                Total | None]


@st.composite
def programs(draw: st.DrawFn) -> Program:
    """A directed graph's node-arc incidence (each arc a column: -1 at its tail, +1 at its
    head, or one entry where it leaves or enters the outside), each node's excess within
    bounds (some open), arcs within integral bounds at integral costs; then rows negated,
    columns fixed, rows bounding one column, and perhaps a total row over some nodes."""
    nodes = draw(st.integers(1, 6))
    arcs = draw(st.integers(1, 12))
    matrix = np.zeros((nodes, arcs))
    for j in range(arcs):
        tail = draw(st.integers(-1, nodes - 1))
        head = draw(st.integers(-1, nodes - 1).filter(lambda h, t=tail: h != t or h == -1))
        if tail >= 0:
            matrix[tail, j] = -1
        if head >= 0:
            matrix[head, j] = 1
    low = np.array([draw(st.sampled_from([-np.inf, -4, -2, -1, 0, 1])) for _ in range(nodes)],
                   dtype=float)
    high = np.array([lo + draw(st.sampled_from([0, 2, 4, 8, np.inf])) if np.isfinite(lo)
                     else draw(st.sampled_from([0.0, 3.0, np.inf])) for lo in low])
    col_low = np.array([draw(st.sampled_from([0, 0, 1, -1])) for _ in range(arcs)],
                       dtype=float)
    col_high = col_low + np.array([draw(st.integers(0, 4)) for _ in range(arcs)])
    cost = np.array([draw(st.integers(-2, 3)) for _ in range(arcs)], dtype=float)
    sign = np.array([draw(st.sampled_from([1.0, -1.0])) for _ in range(nodes)])
    matrix = matrix * sign[:, None]
    low, high = np.where(sign > 0, low, -high), np.where(sign > 0, high, -low)
    bounding = draw(st.lists(st.tuples(st.integers(0, arcs - 1), st.sampled_from([1.0, -1.0]),
                                       st.integers(-1, 2), st.integers(0, 3)), max_size=3))
    for j, v, lo, width in bounding:  # a row bounding one column
        row = np.zeros((1, arcs))
        row[0, j] = v
        matrix = np.vstack([matrix, row])
        low, high = np.append(low, lo), np.append(high, lo + width)
    total = None
    parts = draw(st.lists(st.integers(0, nodes - 1), unique=True, max_size=nodes))
    if parts and draw(st.booleans()):
        row = matrix[parts].sum(axis=0, keepdims=True)
        total = Total(len(matrix), np.array(parts))
        matrix = np.vstack([matrix, row])
        lo = draw(st.integers(-4, 4))
        low, high = np.append(low, lo), np.append(high, lo + draw(st.integers(0, 4)))
    return cost, matrix, low, high, col_low, col_high, total


def _exact(program: Program) -> float | None:
    """HiGHS's integer optimum, every column integer; None when infeasible."""
    cost, matrix, low, high, col_low, col_high, _ = program
    found = milp(cost, constraints=LinearConstraint(matrix, low, high),
                 integrality=np.ones(len(cost)), bounds=Bounds(col_low, col_high))
    assert found.status in (0, 2)
    return None if found.status == 2 else float(found.fun)


@settings(max_examples=400)
@given(programs())
def test_a_network_program_has_the_integer_programs_optimum(program: Program) -> None:
    cost, matrix, low, high, col_low, col_high, total = program
    x = min_cost(cost, csr_array(matrix), low, high, col_low, col_high, total)
    optimum = _exact(program)
    if x is None:  # only where a total's parts are oriented apart (a valid network else)
        assert total is not None
        event("not a flow")
        return
    if optimum is None:
        assert x is False
        event("infeasible")
        return
    assert isinstance(x, np.ndarray)
    event("solved")
    assert np.array_equal(x, np.rint(x))
    assert (x >= col_low).all() and (x <= col_high).all()
    ax = matrix @ x
    assert (ax >= low - 1e-9).all() and (ax <= high + 1e-9).all()
    assert float(cost @ x) == optimum


def test_a_column_in_three_rows_is_not_a_flow() -> None:
    """(Rows with that column alone would only bound it: those are folded, not refused.)"""
    matrix = csr_array(np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 1.0], [-1.0, -1.0, -1.0]]))
    assert min_cost(np.ones(3), matrix, np.zeros(3), np.ones(3), np.zeros(3),
                    np.ones(3)) is None


def test_an_entry_other_than_one_is_not_a_flow() -> None:
    matrix = csr_array(np.array([[2.0, 1.0]]))
    assert min_cost(np.ones(2), matrix, np.zeros(1), np.ones(1), np.zeros(2),
                    np.ones(2)) is None


def test_an_odd_cycle_of_equal_signs_is_not_a_flow() -> None:
    """Three rows each pair of which shares a column with equal signs: no negation of the
    rows gives every column opposite signs (the two-colouring fails)."""
    matrix = csr_array(np.array([[1.0, 0.0, 1.0], [1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]))
    assert min_cost(np.ones(3), matrix, np.zeros(3), np.full(3, 2.0), np.zeros(3),
                    np.ones(3)) is None


def test_fractional_costs_or_bounds_are_not_a_flow() -> None:
    matrix = csr_array(np.array([[1.0, -1.0]]))
    assert min_cost(np.array([1.0, 1.5]), matrix, np.zeros(1), np.zeros(1), np.zeros(2),
                    np.ones(2)) is None
    assert min_cost(np.ones(2), matrix, np.zeros(1), np.zeros(1), np.zeros(2),
                    np.array([1.0, np.inf])) is None


def test_a_total_routes_its_parts_through_one_arc() -> None:
    """Two sinks each taking up to 2 from one source that must send 3, their total at most
    3 at most 2: infeasible; at most 3: feasible at cost 3."""
    # rows: source (sends 3), sink a, sink b, total (a + b)
    matrix = np.array([[-1.0, -1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    low = np.array([-3.0, 0.0, 0.0, 0.0])
    x = min_cost(np.ones(2), csr_array(matrix), low, np.array([-3.0, 2.0, 2.0, 2.0]),
                 np.zeros(2), np.full(2, 5.0), Total(3, np.array([1, 2])))
    assert x is False
    x = min_cost(np.ones(2), csr_array(matrix), low, np.array([-3.0, 2.0, 2.0, 3.0]),
                 np.zeros(2), np.full(2, 5.0), Total(3, np.array([1, 2])))
    assert isinstance(x, np.ndarray) and x.sum() == 3 and (x <= 2).all()


def test_parts_of_a_total_in_separate_components_share_its_node() -> None:
    """A taker whose cells are all fixed stands alone (its own component, oriented +1),
    another is linked through its topic (oriented -1): flipping a whole component puts both
    on the total's node, so the program is still a flow (it was handed to the simplex)."""
    # rows: topic, taker A, taker B, total = A + B
    matrix = np.array([[-1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    x = min_cost(np.array([0.0, 1.0, 1.0]), csr_array(matrix), np.zeros(4),
                 np.array([0.0, 2.0, 2.0, 3.0]), np.zeros(3), np.full(3, 2.0),
                 Total(3, np.array([1, 2])))
    assert isinstance(x, np.ndarray) and list(x) == [0.0, 0.0, 0.0]
    # the same with the topic's arc forced: one unit through A, the total at most 0 refuses
    x = min_cost(np.array([0.0, 1.0, 1.0]), csr_array(matrix), np.zeros(4),
                 np.array([0.0, 2.0, 2.0, 0.0]), np.array([1.0, 0.0, 0.0]), np.full(3, 2.0),
                 Total(3, np.array([1, 2])))
    assert x is False


def test_a_total_of_no_parts_is_an_empty_row() -> None:
    matrix = csr_array(np.array([[1.0], [0.0]]))
    x = min_cost(np.zeros(1), matrix, np.zeros(2), np.array([1.0, 5.0]), np.zeros(1),
                 np.ones(1), Total(1, np.array([], dtype=np.int64)))
    assert isinstance(x, np.ndarray)
    assert min_cost(np.zeros(1), matrix, np.array([0.0, 1.0]), np.array([1.0, 5.0]),
                    np.zeros(1), np.ones(1), Total(1, np.array([], dtype=np.int64))) is False
