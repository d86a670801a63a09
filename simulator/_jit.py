"""The one numba policy of specroof's kernels (roofline.py, sweep/kernels.py and montecarlo.py use it; this module
does not import numba).

    cache        compiled machine code is kept on disk (NUMBA_CACHE_DIR or __pycache__), so a new process loads it
    nogil        the kernels release the GIL, so a sweep can launch them from a few Python threads at once
    error_model  "numpy": a division by zero gives inf / nan as numpy does, with no Python exception check per divide
    fastmath     off: IEEE semantics, so the kernels equal their plain numpy references to 1e-12
"""

JIT = {"cache": True, "nogil": True, "error_model": "numpy", "fastmath": False}
