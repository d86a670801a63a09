"""What the blind rounds whose rules refuse a row specroof cannot fit in memory share (rounds 11, 15 and 17): the
refusal itself, taken from the validation route that prices the row, and the split of a round's rows into those
scored and those listed as refused. The rule keys on the refusal alone, whatever the prediction. Round 20's rows need
devices and models that may not be in the tree yet: `unloadable` names what is missing, and `triage` skips such a row
(listed with the reason) before it refuses or scores the rest."""

from __future__ import annotations


def refusal(r: dict, also: tuple[str, ...] = ()) -> str:
    """specroof's reason for refusing row `r` as infeasible (it does not fit in memory), or for one of the other
    refusals a round's rules name (`also`: phrases of their messages), or '' when it is priced; any other error is
    raised (a row the round wrote wrong is a bug, not a refusal)."""
    from simulator.errors import ScenarioError
    from simulator.validation import predict_row
    try:
        predict_row({"row_id": "blind", **r["csv"], "metric": r["metric"], "measured": repr(r["measured"])})
    except ScenarioError as e:
        if "infeasible" in str(e) or any(a in str(e) for a in also):
            return str(e).splitlines()[0]
        raise
    return ""


def split(rows: list[dict], also: tuple[str, ...] = ()) -> tuple[tuple[dict, ...], tuple[tuple[str, str], ...]]:
    """(the rows scored, (name, reason) of each row refused: listed, not scored); `also` as `refusal` takes it."""
    why = [refusal(r, also) for r in rows]
    return (tuple(r for r, w in zip(rows, why) if not w),
            tuple((r["name"], w) for r, w in zip(rows, why) if w))


def unloadable(r: dict) -> str:
    """Why this tree cannot load row `r`'s device, model or drafter (a bundled name it does not have), or ''."""
    from simulator.errors import SpecroofError
    from simulator.hardware import load_hardware
    from simulator.model import load_model
    c = r["csv"]
    wanted = [("device", c["hardware"], load_hardware), ("model", c["model"], load_model)]
    wanted += [("drafter", c["draft"], load_model)] if c.get("draft") else []
    for what, name, load in wanted:
        try:
            load(name)
        except SpecroofError as e:
            return f"{what} {name!r} cannot be loaded in this tree ({str(e).splitlines()[0]})"
    return ""


def triage(rows: tuple[dict, ...]) -> tuple[tuple[dict, ...], tuple[tuple[str, str], ...]]:
    """(the rows scored, (name, reason) of each row skipped because its device or model does not load, or refused
    because it does not fit in memory): nothing is priced for a row that does not load."""
    why = [unloadable(r) or refusal(r) for r in rows]
    return (tuple(r for r, w in zip(rows, why) if not w),
            tuple((r["name"], w) for r, w in zip(rows, why) if w))


def print_candidates(n: int, rows: tuple, candidates: tuple, none: str) -> int:
    """Print a round's candidates, (what, url, found, why refused) each, for a round where `none` met the rules
    (rounds 16 and 18: nothing is priced)."""
    print(f"round {n}: {len(rows)} rows (no {none} met the rules); {len(candidates)} candidates read")
    for what, url, found, why in candidates:
        print(f"- {what}{' ' + url if url else ''}\n  found: {found}\n  refused: {why}")
    return 0


def print_rows(head: str, rows: tuple, candidates: tuple) -> int:
    """Print a round's rows (name and measured value; nothing priced) under `head`, then the candidates read but
    not taken, (what, url, found, why refused) each (rounds 20 and 21)."""
    print(head)
    for r in rows:
        print(f"  {r['name']}: {r['metric']} {r['measured']:.4g}")
    for what, url, found, why in candidates:
        print(f"- {what}{' ' + url if url else ''}\n  found: {found}\n  refused: {why}")
    return 0
