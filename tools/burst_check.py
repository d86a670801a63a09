"""Does the start-up estimate of simulator/burst.py hold for a row's run? An event replay of the benchmark against it.

    python tools/burst_check.py V443 V553 V759        # disaggregated TTFT rows with num_prompts (a few seconds each)

burst.py takes a run of N prompts at concurrency C as its first wave (C prompts queued together for prefill) and N - C
requests at the steady state. This replays the client for a disaggregated row, with the priced prefill instance and
decode: C slots, each sending its next prompt when its previous request ends (InferenceX's benchmark_serving.py at
--request-rate inf), a first-come-first-served prefill instance that finishes a prompt no sooner than its pass and KV
transfer after its send and no sooner than 1 / mu after the one before (mu its priced rate: a fluid server), at most
R requests decoding (the engine's cap; the rest wait for a slot), each decoding (osl_i - 1) x TPOT (the priced
steady-state TPOT), osl_i uniform on [0.8 osl, osl] (InferenceX's --random-range-ratio 0.8). It prints the replay's
mean TTFT beside the priced one: where they agree the later waves are at the steady state, as burst.py takes them;
where the replay is higher they arrive bunched (a first wave that ends close together sends the next in a bunch).
"""

from __future__ import annotations

import heapq
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulator.prompts import prompt_side  # noqa: E402
from simulator.serving import serve  # noqa: E402
from simulator.validation import load_rows, prepare_row  # noqa: E402


def replay(C: int, R: int, N: int, mu: float, pass_s: float, tpot_s: float, osl: np.ndarray) -> np.ndarray:
    """TTFT of each of N requests (in send order) of the replay described in the module docstring."""
    free = [0.0] * C                              # when each client slot sends its next prompt
    decoding: list[float] = []                    # when each decoding request ends (at most R)
    last, out = -np.inf, np.empty(N)
    for i in range(N):
        sent = heapq.heappop(free)
        done = max(sent + pass_s, last + 1.0 / mu)
        last = done
        if len(decoding) >= R:
            done = max(done, heapq.heappop(decoding))
        out[i] = done - sent
        end = done + (osl[i] - 1) * tpot_s
        heapq.heappush(decoding, end)
        heapq.heappush(free, end)
    return out


def check(r: dict[str, str], seed: int = 0) -> str:
    """One row's line: its replayed and priced mean TTFT (the last, busiest instance of its mix)."""
    p = prepare_row(r)
    w = p.workload
    if w is None or not w.pd or w.num_prompts is None:
        return f"{r['row_id']}: not a disaggregated serving row with num_prompts"
    res = serve(p.scenario, w, dep=p.dep)
    ph = res.spec if p.scenario.method else res.base
    C, R, N = int(res.concurrency[-1]), int(round(float(ph.running[-1]))), w.num_prompts
    pf = prompt_side(p.dep, w.fitting(p.dep.target.max_position)[0])
    osl = int(r["osl"])
    lengths = np.random.default_rng(seed).integers(int(0.8 * osl), osl + 1, size=N)
    t = replay(C, R, N, res.prefill_rps, pf.pass_s, float(ph.tpot_s[-1]), lengths)
    return (f"{r['row_id']}: C {C}, R {R}, N {N}, mu {res.prefill_rps:.1f}/s: replayed mean TTFT {t.mean():.3f} s "
            f"(first wave {t[:C].mean():.3f}, the rest {t[C:].mean():.3f}); priced {float(ph.ttft_s[-1]):.3f}; "
            f"measured {float(r['measured']):.3f}")


def main(argv: list[str]) -> int:
    rows = {r["row_id"]: r for r in load_rows()}
    missing = [a for a in argv if a not in rows]
    if not argv or missing:
        print(f"usage: python tools/burst_check.py ROW_ID ...; unknown rows: {', '.join(missing) or 'none given'}",
              file=sys.stderr)
        return 2
    for a in argv:
        print(check(rows[a]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
