"""specroof: predict, without a GPU, when speculative decoding pays off.

Public API::

    load_hardware(name_or_path) -> Hardware            hardware_specs/*.toml, SI units
    load_model(id_or_path) -> ModelShape               models/*.json (HF config.json)
    load_engine(name_or_path) -> EngineProfile          engine_profiles/*.toml
    simulate_step(hw, model, batch, query_tokens, context, ...) -> StepResult
    speedup_curve(hw, model, method, ..., acceptance=Acceptance.from_rate(0.7), k="auto") -> SpeedupResult
    validate(rows_csv=None) -> ValidationReport       predicted vs published measurements
    calibrate(rows, base_engine, params) -> CalibrationResult   fit an engine profile (least squares)

Symbols (used in code and docs):
    B        batch: sequences decoded together in one step
    q        new tokens per sequence in a pass (1 decode, k+1 verify, T tree tokens, the prompt at prefill)
    L        tokens already in the KV cache (context)
    k        draft depth (gamma in Leviathan et al. 2023)
    T        tokens verified per sequence by a tree
    alpha    per-token acceptance rate; tau the mean acceptance length (tokens per step, bonus included)
    c        draft / target step-cost ratio (Leviathan et al. 2023, Def. 3.7)
    E, top_k routed experts and experts per token; u = 1 - (1 - k/E)^(Bq) the fraction touched
All quantities are SI: seconds (_s), bytes (_bytes), FLOP (_flops), FLOP/s, bytes/s.
"""

from .acceptance import Acceptance
from .calibrate import CalibrationResult, calibrate, write_profile
from .engine import EngineProfile, list_engines, load_engine
from .errors import ModelConfigError, ScenarioError, SpecError
from .hardware import Hardware, list_hardware, load_hardware
from .model import ModelShape, list_models, load_model
from .speedup import SpeedupResult, speedup_curve
from .step import StepResult, simulate_step
from .validate import ValidationReport, load_rows, validate
from .workload import Parallelism, Precision, forward_pass

__version__ = "0.1.0"

__all__ = ["Acceptance", "CalibrationResult", "EngineProfile", "ValidationReport", "calibrate", "load_rows",
           "validate", "write_profile", "Hardware", "ModelConfigError", "ModelShape", "Parallelism", "Precision",
           "ScenarioError", "SpecError", "SpeedupResult", "StepResult", "forward_pass", "list_engines",
           "list_hardware", "list_models", "load_engine", "load_hardware", "load_model", "simulate_step",
           "speedup_curve"]
