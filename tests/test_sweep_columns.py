"""The columns of a sweep's Parquet files as a notebook reads them (user review of `specroof sweep`, 2026-12-06): each
column carries its description in the file, with its unit and what a missing value means."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from simulator.scenario import scenario_fields
from simulator.sweep import sweep_to_dir
from simulator.sweep.names import FIELD_ORDER, RESULT_DOCS, column_doc
from simulator.sweep.spec import PARAMS


def _docs(path):
    return {f.name: f.metadata[b"description"].decode() for f in pq.read_schema(path)}


@pytest.mark.parametrize("k", [[0, 2], "auto"])
def test_every_column_of_a_sweep_is_described_in_the_file(tmp_path, k):
    # review: the merged Parquet had no description of any column; spec_overlap (true / false / "default") reads as
    # 1.0 / 0.0 / NaN in pandas with nothing to say so
    spec = {"model": "llama-3.1-8b", "engine": "sglang", "spec_overlap": [True, False, "default"], "k": k,
            "tree_tokens": "default", "acceptance_rate": [0.6, 0.8], "batch": [1, 16]}
    r = sweep_to_dir(spec, tmp_path / "d", progress=False)
    for path in (r["merged"], tmp_path / "d" / "shards" / "shard-0-of-1.parquet"):
        docs = _docs(path)
        assert all(docs.values()) and set(docs) >= set(FIELD_ORDER)
        assert docs["spec_overlap"].endswith("; 1 on, 0 off, null: the library default")
        assert docs["tree_tokens"].endswith('; null: the library default ("default" in the spec)')
        assert docs["speedup"].startswith(RESULT_DOCS["speedup"]) and "null: not priced" in docs["speedup"]
        assert docs["memory_bytes"].startswith("per-GPU memory with speculation, bytes; kept where the point does "
                                               "not fit")
        assert docs["base_step_s"].startswith("plain decode step, s")
        # k is a result (null where not priced) only where k = "auto" chose it
        assert ("null: not priced" in docs["k"]) == (k == "auto"), docs["k"]
    t = pq.read_table(r["merged"]).to_pandas()
    assert set(t["spec_overlap"].dropna()) == {0, 1} and t["spec_overlap"].isna().any()


def test_every_parameter_and_result_has_a_description():
    sweepable = {f.name for f in scenario_fields("sweep")}
    for name in PARAMS + FIELD_ORDER:
        assert column_doc(name), name
    assert sweepable <= set(PARAMS)
