"""What a least-squares solve (scipy.optimize.least_squares) ended with, in the calibration's terms: whether it
converged, on which criterion, or which parameters it left short of a minimum. scipy's own sentence is kept as a
detail (`FitResult.solver_message`), never as the message."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# scipy's `status` of a solve that converged, and the criterion it met (least_squares documentation)
CONVERGED = {1: "the gradient vanished (gtol)", 2: "the residuals stopped improving (ftol)",
             3: "the parameters stopped moving (xtol)", 4: "the residuals and the parameters stopped changing "
                                                            "(ftol and xtol)"}


def describe(sol: Any, names: Sequence[str], n_rows: int) -> str:
    """One sentence on how the solve of `names` (group.parameter) over `n_rows` rows ended: "converged: ..." or
    "did not converge: ..." naming the parameters and why (scipy's text in parentheses)."""
    if sol is None:
        return "no free parameter: every parameter asked for kept its profile's value"
    status, nfev = int(sol.status), int(sol.nfev)
    if status in CONVERGED:
        return f"converged after {nfev} evaluations: {CONVERGED[status]}"
    what = f"the least-squares fit of {', '.join(names)} to the {n_rows} rows"
    if status == 0:
        return f"did not converge: {what} stopped at its limit of {nfev} evaluations before the residuals settled " \
               f"(scipy: {sol.message})"
    return f"did not converge: {what} failed (scipy status {status}: {sol.message})"


__all__ = ["CONVERGED", "describe"]
