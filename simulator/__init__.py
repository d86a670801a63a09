"""specroof: predict, without a GPU, when speculative decoding pays off.

Public API::

    load_hardware(name_or_path) -> Hardware            hardware_specs/*.toml, SI units
    load_model(id_or_path) -> ModelShape               models/*.json (HF config.json)
    load_engine(name_or_path) -> EngineProfile          engine_profiles/*.toml
    Scenario(hardware=..., model=..., method=..., ...)  every input of a prediction, checked; .resolve() loads it
    predict(scenario) -> SpeedupResult                 speedup, best k and break-even per batch
    speedup_curve(**scenario_fields) -> SpeedupResult  predict(Scenario(**fields))
    simulate_step(hw, model, batch, query_tokens, context, ...) -> StepResult
    serve(scenario, Workload(isl, osl, concurrency)) -> ServeResult   TTFT, TPOT, E2E and throughput per concurrency
    validate(path=None) -> ValidationReport           predicted vs published measurements (in-sample)
    crossval(rows=None) -> CrossValidation            leave-one-source-out: held-out error of the calibration
    load_bands() -> tuple[Band, ...]; band_for(bands, moe, batch, given) -> Band | None
                                                       what held-out speedups like a prediction measured against it
    known_hazards(result, options=None) -> list[Hazard]   the warnings the CLI prints beside a predict, serve or
                                                       frontier result (hazards/known_hazards.toml)
    calibrate(rows, base_engine, params) -> FitResult  fit an engine profile's host mechanisms (least squares)
    simulator.advise.advise(scenario, batch_range) -> Advice    best k per batch, switch-off batch, engine configs
    simulator.frontier.frontier(scenario, workload, gpus) -> FrontierResult   throughput-interactivity frontiers
        (each in the module of its name: `from simulator.advise import advise`; the package attribute of that
        name is the module)

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

from importlib import import_module
from typing import Any

from .version import __version__

# Public name -> the module that defines it. Loaded on first use (PEP 562), so that `import simulator` and the CLI's
# --help do not import numba, scipy or the data files.
_EXPORTS: dict[str, str] = {
    "Acceptance": "acceptance", "FitResult": "calibration", "calibrate": "calibration",
    "CrossValidation": "cross_validation", "crossval": "cross_validation", "ServeResult": "serving",
    "Workload": "serving",
    "serve": "serving", "static_batch": "static",
    "write_profile": "profile_out", "EngineProfile": "engine", "list_engines": "engine", "load_engine": "engine",
    "ModelConfigError": "errors", "OutputError": "errors", "ScenarioError": "errors", "SpecError": "errors",
    "SpecroofError": "errors", "Hardware": "hardware", "list_hardware": "hardware", "load_hardware": "hardware",
    "ModelShape": "model", "list_models": "registry", "load_model": "model", "Deployment": "scenario",
    "Scenario": "scenario", "SpeedupResult": "speedup", "predict": "speedup", "speedup_curve": "speedup",
    "run_points": "speedup", "run_speedup": "speedup",
    "StepResult": "step", "simulate_step": "step", "ValidationReport": "report", "load_rows": "validation",
    "validate": "validation", "Parallelism": "workload", "Precision": "workload", "forward_pass": "workload",
    "FrontierResult": "frontier", "Advice": "advise", "default_decay": "drafters", "Band": "heldout",
    "band_for": "heldout", "load_bands": "heldout", "known_hazards": "result_hazards",
}
__all__ = ["Acceptance", "Advice", "Band", "CrossValidation", "Deployment", "EngineProfile", "FitResult",
           "FrontierResult", "Hardware", "ModelConfigError", "ModelShape", "OutputError", "Parallelism", "Precision",
           "Scenario", "ScenarioError", "ServeResult", "SpecError", "SpecroofError", "SpeedupResult", "StepResult",
           "ValidationReport", "Workload", "band_for", "calibrate", "crossval", "default_decay", "forward_pass",
           "known_hazards", "list_engines", "list_hardware", "list_models", "load_bands", "load_engine",
           "load_hardware", "load_model", "load_rows", "predict", "run_points", "run_speedup", "serve",
           "simulate_step", "speedup_curve", "static_batch", "validate", "write_profile", "__version__"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'simulator' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
