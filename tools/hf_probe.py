"""Time Hugging Face Transformers' eager passes on one GPU: what specroof's `hf` engine profile prices from estimates.

    python tools/hf_probe.py --out OUT          # on the device machine (CUDA, PyTorch, transformers): about a minute
    python tools/hf_probe.py --out OUT --quick  # anywhere with PyTorch and transformers, CPU included: a smoke test

Random bf16 weights in the shapes of models/*.json, built on the device (no download). It writes OUT/hf_probe.csv
(one row per timed point) and OUT/hf_meta.json. Times are wall clock around synchronised calls (host work included,
as generate() pays it), the median of the repeats after a warm-up:

  forward   one eager forward of Llama-3.1-8B over a DynamicCache of `context` tokens: B sequences of q new tokens,
            B = 1..64, q = 1, 2, 4, 8 (decode and verify passes), the cache cropped back after each
  generate  generate() of 64 new tokens after a `context`-token prompt at batch 1 and 8, greedy, less the prefill
            (a forward of the prompt timed alone): the time per decode step with generate()'s own host work
  assisted  generate() with an assistant (Qwen3-8B target, Qwen3-0.6B assistant, num_assistant_tokens k = 1, 3, 5,
            a constant schedule) at batch 1: random weights accept no drafts, so every iteration yields one token and
            costs k draft steps, a verify of k + 1 tokens and the bookkeeping; the row is the time per iteration

The profile's figures these test: `launch.kernel_launch_s` (per op-table kernel, an estimate from PR #34923),
`host.step_overhead_s`, `spec.draft_step_overhead_s` and `spec.bookkeeping_s` (1 ms each, estimates).
"""

from __future__ import annotations

import argparse
import csv
import json
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_probe import prepare  # noqa: E402

MODELS = Path(__file__).resolve().parent.parent / "models"
COLUMNS = ("probe", "model", "batch", "q", "context", "new_tokens", "k", "time_us", "note")
TINY = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 512}


def build(torch, name: str, dev: str, quick: bool):
    """A random-weight causal LM of models/<name>.json (tiny dimensions with `quick`), bf16 on `dev`, in eval mode."""
    import transformers
    cfg = json.loads((MODELS / f"{name}.json").read_text())
    if quick:
        cfg |= TINY
    config = transformers.AutoConfig.for_model(**cfg)
    with torch.device(dev):
        m = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    return m.eval()


def clock(torch, fn, reps: int) -> float:
    """Median wall-clock seconds of a synchronised call of fn, after one warm-up."""
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    fn()
    out = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def forward_rows(torch, m, name: str, dev: str, quick: bool, ctx: int) -> list[dict]:
    rows, vocab = [], m.config.vocab_size
    for b in (1, 4) if quick else (1, 4, 16, 64):
        prompt = torch.randint(vocab, (b, ctx), device=dev)
        with torch.no_grad():
            cache = m(prompt, use_cache=True, logits_to_keep=1).past_key_values
            for q in (1, 4) if quick else (1, 2, 4, 8):
                ids = torch.randint(vocab, (b, q), device=dev)

                def step(ids=ids, cache=cache):
                    m(ids, past_key_values=cache, use_cache=True)
                    cache.crop(ctx)
                rows.append(dict(probe="forward", model=name, batch=b, q=q, context=ctx,
                                 time_us=f"{clock(torch, step, 3 if quick else 10) * 1e6:.1f}",
                                 note="eager forward over a DynamicCache, cropped back after each"))
        del cache
    return rows


def _generate(torch, m, prompt, new: int, **kw) -> float:
    with torch.no_grad():
        return clock(torch, lambda: m.generate(prompt, max_new_tokens=new, min_new_tokens=new, do_sample=False,
                                               pad_token_id=0, **kw), 3)


def generate_rows(torch, m, name: str, dev: str, quick: bool, ctx: int) -> list[dict]:
    rows, new = [], 8 if quick else 64
    for b in (1,) if quick else (1, 8):
        prompt = torch.randint(m.config.vocab_size, (b, ctx), device=dev)
        t_all = _generate(torch, m, prompt, new)
        t_pre = _generate(torch, m, prompt, 1)
        rows.append(dict(probe="generate", model=name, batch=b, q=1, context=ctx, new_tokens=new,
                         time_us=f"{(t_all - t_pre) / (new - 1) * 1e6:.1f}",
                         note=f"per decode step: (generate {new} tokens - generate 1) / {new - 1}; greedy"))
    return rows


def assisted_rows(torch, target, draft, names: tuple[str, str], quick: bool, ctx: int, dev: str) -> list[dict]:
    rows, new = [], 8 if quick else 32
    prompt = torch.randint(target.config.vocab_size, (1, ctx), device=dev)
    t_pre = _generate(torch, target, prompt, 1)
    for k in (1, 3) if quick else (1, 3, 5):
        draft.generation_config.num_assistant_tokens = k
        draft.generation_config.num_assistant_tokens_schedule = "constant"
        draft.generation_config.assistant_confidence_threshold = 0.0     # no early stop of the draft
        t = _generate(torch, target, prompt, new, assistant_model=draft)
        rows.append(dict(probe="assisted", model=f"{names[0]} + {names[1]}", batch=1, q=k + 1, context=ctx,
                         new_tokens=new, k=k, time_us=f"{(t - t_pre) / (new - 1) * 1e6:.1f}",
                         note=f"per iteration (random weights: no draft accepted, one token each): (generate {new} "
                              "- generate 1) / (new - 1); greedy"))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for hf_probe.csv and hf_meta.json")
    ap.add_argument("--quick", action="store_true", help="tiny models, a few repeats: a smoke test (CPU works)")
    a = ap.parse_args(argv)
    ready = prepare(("torch", "transformers"), "tools/hf_probe.py", a.quick)
    if ready is None:
        return 2
    (torch, transformers), dev, _ = ready
    cuda, ctx, out = dev == "cuda", (32 if a.quick else 1024), Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    info = {"torch": torch.__version__, "transformers": transformers.__version__, "python": platform.python_version(),
            "device": torch.cuda.get_device_name(0) if cuda else "cpu", "failed": []}
    rows: list[dict] = []
    llama = "meta-llama__Llama-3.1-8B-Instruct"
    m1 = build(torch, llama, dev, a.quick)
    _run("forward", lambda m=m1: forward_rows(torch, m, llama, dev, a.quick, ctx), rows, info, out)
    _run("generate", lambda m=m1: generate_rows(torch, m, llama, dev, a.quick, ctx), rows, info, out)
    del m1
    if cuda:
        torch.cuda.empty_cache()
    names = ("Qwen__Qwen3-8B", "Qwen__Qwen3-0.6B")
    _run("assisted", lambda: assisted_rows(torch, build(torch, names[0], dev, a.quick),
                                           build(torch, names[1], dev, a.quick), names, a.quick, ctx, dev),
         rows, info, out)
    print(f"wrote {out / 'hf_probe.csv'} ({len(rows)} rows)", file=sys.stderr)
    return 1 if info["failed"] else 0


def _run(name: str, job, rows: list[dict], info: dict, out: Path) -> None:
    """Run one probe; a failure is recorded in hf_meta.json and spares the rest; the files are rewritten after it."""
    t0 = time.perf_counter()
    try:
        rows += job()
    except Exception as e:          # noqa: BLE001 - a transformers API that differs from the one written against
        info["failed"].append(f"{name}: {type(e).__name__}: {(str(e).splitlines() or [''])[0][:200]}")
    with open(out / "hf_probe.csv.tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=("device", *COLUMNS))
        w.writeheader()
        w.writerows({"device": info["device"], **{c: r.get(c, "") for c in COLUMNS}} for r in rows)
    (out / "hf_probe.csv.tmp").replace(out / "hf_probe.csv")
    (out / "hf_meta.json").write_text(json.dumps(info, indent=1) + "\n")
    print(f"{name}: {len(rows)} rows, {time.perf_counter() - t0:.0f} s; failed: {info['failed']}", file=sys.stderr,
          flush=True)


if __name__ == "__main__":
    sys.exit(main())
