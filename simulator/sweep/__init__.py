"""Parameter sweeps: the Cartesian product of Scenario parameters x acceptance x batch, priced once per
(configuration, verify shape, context) and combined for every acceptance value and batch in one numba kernel.

    spec.py      the spec language (TOML or dict: scalars, lists, ranges, [[zip]] groups), checked before work
    evaluate.py  pricing through `simulator.pricing` and the combine (kernels.py: numba, with a numpy reference)
    dataset.py   a whole grid as an xarray Dataset (`run_sweep`)
    store.py     Parquet shards, resume, merge and Dask (`sweep_to_dir`, `plan_dir`, `merge`, `read_sweep`)
    manifest.py  DIR/manifest.json: written once, each field with its digest; checked on resume, merge, dry run
"""

from .dataset import run_sweep, to_dataset
from .evaluate import ShardResult, check_some_configuration, evaluate
from .spec import PARAMS, Axis, SweepSpec, load_spec, parse_spec
from .store import merge, plan_dir, read_sweep, schema, shard_bytes, shard_range, sweep_to_dir, write_shard

__all__ = ["Axis", "PARAMS", "ShardResult", "SweepSpec", "check_some_configuration", "evaluate", "load_spec", "merge",
           "parse_spec", "plan_dir", "read_sweep", "run_sweep", "schema", "shard_bytes", "shard_range", "sweep_to_dir",
           "to_dataset", "write_shard"]
