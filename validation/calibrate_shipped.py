"""Reproduce the calibrated values shipped in engine_profiles/ (the documented calibration).

    python validation/calibrate_shipped.py            # prints the fits; --write updates engine_profiles/*.toml

sglang: fitted on the SGLang H100 rows (EAGLE-3 paper Tables 3 and 4, rows S001-S020): speculative bookkeeping per
        step, the GEMM fraction reached at decode/verify shapes, and the math/memory overlap efficiency. The host
        step overhead stays at its sourced value (it is hidden by the overlap scheduler at plain decode, so only its
        sum with the bookkeeping is identified from speedups).
hf:     fitted on the Spec-Bench A100 rows (S026-S037): host overhead per generate() step and the speculative
        bookkeeping of the reference implementations.
vllm:   fitted on the vLLM #20780 rows (S038-S044, H100, batch 1, run without async scheduling): host work per step
        (hidden behind the GPU when async scheduling is on, the current default), speculative bookkeeping per step
        and host work per draft pass. Its GEMM fraction and overlap are not fitted (no vLLM rows above batch 1).
trtllm is not calibrated: it already lands within 6 % of its rows with sourced values.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simulator.calibrate import calibrate, write_profile  # noqa: E402
from simulator.validate import load_rows  # noqa: E402

FITS = {
    "sglang": ("SGLang", ("spec_bookkeeping_s", "gemm_fraction", "overlap_efficiency"), "SGLang H100 rows S001-S020"),
    "hf": ("Spec-Bench", ("host_step_s", "spec_bookkeeping_s"), "Spec-Bench A100 rows S026-S037"),
    "vllm": ("vLLM issue #20780", ("host_step_s", "spec_bookkeeping_s", "draft_step_overhead_s"),
             "vLLM #20780 H100 batch-1 rows S038-S044"),
}


def main(write: bool) -> None:
    rows = load_rows(ROOT / "validation" / "rows.csv")
    for eng, (src, params, label) in FITS.items():
        res = calibrate([r for r in rows if src in r["source"]], eng, params)
        print(eng, {k: f"{v:.4g} +- {res.stderr[k]:.2g}" for k, v in res.values.items()},
              f"rms log residual {res.rms_before:.3f} -> {res.rms_after:.3f}")
        if write:
            out = ROOT / "engine_profiles" / f"{eng}.toml"
            write_profile(res, eng, out, f"validation/rows.csv ({label})", name=eng)


if __name__ == "__main__":
    main("--write" in sys.argv)
