"""What the blind rounds whose rules refuse a row specroof cannot fit in memory share (rounds 11, 15 and 17): the
refusal itself, taken from the validation route that prices the row, and the split of a round's rows into those
scored and those listed as refused. The rule keys on the refusal alone, whatever the prediction."""

from __future__ import annotations


def refusal(r: dict) -> str:
    """specroof's reason for refusing row `r` as infeasible (it does not fit in memory), or '' when it is priced."""
    from simulator.errors import ScenarioError
    from simulator.validation import predict_row
    try:
        predict_row({"row_id": "blind", **r["csv"], "metric": r["metric"], "measured": repr(r["measured"])})
    except ScenarioError as e:
        if "infeasible" in str(e):
            return str(e)
        raise
    return ""


def split(rows: list[dict]) -> tuple[tuple[dict, ...], tuple[tuple[str, str], ...]]:
    """(the rows scored, (name, reason) of each row refused: listed, not scored)."""
    why = [refusal(r) for r in rows]
    return (tuple(r for r, w in zip(rows, why) if not w),
            tuple((r["name"], w) for r, w in zip(rows, why) if w))


def print_candidates(n: int, rows: tuple, candidates: tuple, none: str) -> int:
    """Print a round's candidates, (what, url, found, why refused) each, for a round where `none` met the rules
    (rounds 16 and 18: nothing is priced)."""
    print(f"round {n}: {len(rows)} rows (no {none} met the rules); {len(candidates)} candidates read")
    for what, url, found, why in candidates:
        print(f"- {what}{' ' + url if url else ''}\n  found: {found}\n  refused: {why}")
    return 0
