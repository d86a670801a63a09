"""A whole-grid sweep result as a labelled xarray Dataset (dimensions: the swept parameters)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..errors import ScenarioError
from ..version import __version__
from .evaluate import ShardResult, check_some_configuration, evaluate
from .names import FIELD_ORDER, RESULT_DOCS
from .spec import SweepSpec, is_int, is_num, load_spec

ATTRS = RESULT_DOCS       # each result variable's description (names.RESULT_DOCS, the Parquet columns' too)
# In the Parquet files every number of an infeasible point but memory_bytes is null (store._result_column); in the
# in-memory Dataset a field keeps what the point would cost, NaN where a configuration was rejected: select the
# priced points with ds.where(ds.feasible).


def _layout(spec: SweepSpec) -> tuple[dict[str, list[str]], dict[str, list[int]]]:
    """Dimension names and shape of each result level (point, cell_batch, cell_acc, cell)."""
    cdims = [a.name for a in spec.cell_axes]
    cshape = list(spec.cell_shape)
    adims = [spec.acc_axis.name] if spec.acc_axis else []
    ashape = [spec.n_acc] if spec.acc_axis else []
    # A single batch value given as a scalar is a scalar coordinate, not a dimension of length 1.
    bdims, bshape = (["batch"], [len(spec.batch)]) if spec.batch_listed else ([], [])
    dims_of = {"point": cdims + adims + bdims, "cell_batch": cdims + bdims, "cell_acc": cdims + adims,
               "cell": cdims}
    shape_of = {"point": cshape + ashape + bshape, "cell_batch": cshape + bshape, "cell_acc": cshape + ashape,
                "cell": cshape}
    return dims_of, shape_of


def _data_vars(res: ShardResult) -> dict[str, Any]:
    """One xarray Variable per result field, in FIELD_ORDER, shaped by its level; messages as their text."""
    import xarray as xr
    dims_of, shape_of = _layout(res.spec)
    msg_table = np.array(res.messages, dtype=object)
    data = {}
    for name in FIELD_ORDER:
        if name not in res.fields:
            continue
        level, arr = res.fields[name]
        arr = arr.reshape(shape_of[level])
        if name == "message":
            arr = msg_table[arr.ravel()].reshape(arr.shape)    # an array even at 0-d (msg_table[0-d] is a str)
        data[name] = xr.Variable(dims_of[level], arr, attrs={"description": ATTRS[name]}, fastpath=True)
    return data


def _var(dims: tuple[str, ...], values: np.ndarray) -> Any:
    """A coordinate Variable, ready-made; a dimension coordinate's values as a pandas Index."""
    import pandas as pd
    import xarray as xr
    if len(dims) == 1 and values.ndim == 1:
        values = pd.Index(values, dtype=values.dtype, name=dims[0])
    return xr.Variable(dims, values, fastpath=True)


def _coords(spec: SweepSpec) -> dict[str, Any]:
    """Coordinates: one per swept axis (an index, with one coordinate per parameter for a zipped axis), the batch
    and the fixed scalars (k only when given: with k = "auto" the chosen k is a data variable)."""
    import xarray as xr
    coords: dict[str, Any] = {}
    for a in spec.axes:
        if len(a.params) == 1:
            coords[a.name] = _var((a.name,), _coord_array(a.values[a.name]))
        else:
            coords[a.name] = _var((a.name,), np.arange(a.n))
            for p in a.params:
                coords[p] = xr.Variable((a.name,), _coord_array(a.values[p]), fastpath=True)
    batch = np.asarray(spec.batch, dtype=np.int64)
    coords["batch"] = _var(("batch",), batch) if spec.batch_listed else _var((), np.asarray(batch[0]))
    for p, v in spec.scalars.items():
        if not (p == "k" and spec.auto):       # with k = "auto" the chosen k is a data variable
            coords[p] = _var((), np.asarray(v, dtype=object if isinstance(v, str) else None))
    return coords


def to_dataset(res: ShardResult):
    """A labelled xarray Dataset of a whole-grid ShardResult (dimensions: the swept parameters)."""
    import xarray as xr
    spec = res.spec
    if (res.c0, res.c1) != (0, spec.n_cells):
        raise ScenarioError("to_dataset needs the whole grid (evaluate(spec) with the default cell range)")
    # Every Variable is built ready-made (fastpath) from plain numpy arrays, and every dimension coordinate from a
    # pandas Index: xarray's own conversion probes each array for dask and so imports dask (about 0.05 s of a
    # 1 s start) when it is installed.
    ds = xr.Dataset(_data_vars(res), coords=_coords(spec))
    ds.attrs.update({"spec_hash": spec.spec_hash, "specroof_version": __version__,
                     "description": spec.description or "specroof sweep"})
    return ds


def _coord_array(vals: tuple) -> np.ndarray:
    if all(isinstance(v, str) for v in vals):
        return np.array(vals, dtype=object)
    if all(is_int(v) for v in vals):
        return np.array(vals, dtype=np.int64)
    if all(is_num(v) for v in vals):
        return np.array(vals, dtype=np.float64)
    return np.array(vals, dtype=object)


def run_sweep(spec: SweepSpec | dict[str, Any] | str | os.PathLike[str], kernel: str = "numba"):
    """Evaluate a whole sweep in memory and return it as an xarray Dataset."""
    s = load_spec(spec)
    check_some_configuration(s)
    return to_dataset(evaluate(s, kernel=kernel))
