"""Round 10 (2026-12-06) of the blind test (tools/blind_test.py): rows found by a research helper's search for
published speculative-decoding speedups against batch or concurrency absent from the repository, after round 9.
Each entry is a Row's keyword arguments; its `csv` entry is a row in validation/rows.csv's columns, priced by
simulator.validation.predict_row exactly as validation prices such a row (engine_date as there). Kept apart from
blind_test.py, as round 9 is.

Search (2026-12-06, the search tool's issues, pages, code and docs corpora, then the sources' own repositories:
sgl-project/sgl-cookbook, vllm-project/speculators, z-lab/dflash): EAGLE / EAGLE-3, MTP, n-gram, draft-model,
Medusa, suffix and DFlash speedups at several batch sizes or concurrencies under vLLM, SGLang and TensorRT-LLM on
bundled devices and models, with the acceptance length and k where published, and plain-vs-speculative TPOT pairs.
What was found but cannot be expressed or scored is listed in the helper's report (round 10), not here.

Inclusion rules, fixed before any prediction was run:
- A source is used when it gives, on one bundled device, model and engine, a speculative speedup (or a plain and a
  speculative rate of the same run) at a stated batch or concurrency, with the method's draft depth k stated, and
  when its numbers are readable in a stored copy with an address to cite. Every such number of the source is a row,
  whatever the prediction.
- The acceptance length is used where the source publishes it for the same configuration; where it publishes one
  acceptance length per dataset and block size (not per concurrency) that value is used at every concurrency.
- Speedups a source rounds are scored as printed (no un-rounding); a cell the stored copy cuts off mid-number is
  kept as far as it reads, and its row says so.
- Nothing is tuned: drafter shapes are the method's default where the source gives no config the repository bundles.

Source: z-lab's DFlash drafter for gpt-oss-120b (model card, Evaluation section), SGLang on one H200. The card's
Acceptance Length table gives tau per dataset at block sizes 4, 6 and 10 (3, 5 and 9 draft tokens); its Speedup
table gives GSM8K's end-to-end speedup at concurrency 1, 8, 16 and 32 for block sizes 4 and 10: eight rows. The
stored copy (a mirror of the Hugging Face card, read through the search tool's pages corpus) stops after the GSM8K
table's last cell, so the card's other datasets' speedups (if any) are not read.
"""

from __future__ import annotations

# The Hugging Face model card; the text was read through a mirror of it in the pages corpus
# (https://fast.hugflare.com/z-lab/gpt-oss-120b-DFlash), the only stored copy with the Evaluation section.
DFLASH_120B = "https://huggingface.co/z-lab/gpt-oss-120b-DFlash"
DFLASH_ASSUMED = (
    "gpt-oss-120b on one H200 (the card: 'All experiments are conducted using SGLang on a single H200 GPU', launch "
    "--tp-size 1 --mem-fraction-static 0.8 --attention-backend fa3); the SGLang build is the DFlash PR the card "
    "installs (sgl-project/sglang PR #16818, early 2026, engine_date 2026-02: before SpecV2 became the default, so "
    "the speculative steps are priced with the V1 worker, as validation prices such rows); weights as the checkpoint "
    "ships them (experts MXFP4, the rest BF16, as validation's gpt-oss rows), KV cache BF16 (not stated); the drafter "
    "(0.8B parameters, config not bundled) priced as the dflash method's default synthesized block drafter; block "
    "size b read as k = b - 1 draft tokens (the card: 'Block size = 4 (3 draft tokens)', 'Block size = 10 (9 draft "
    "tokens)'), with the card's GSM8K acceptance length at that block size used at every concurrency (the card gives "
    "one per dataset and block size); the speedup is 'end-to-end ... including prefill time' (dflash/benchmark.py "
    "serves a prompt pool through a thread pool of `concurrency` workers and divides output tokens by wall time), "
    "mapped as e2e_speedup of a closed loop at the concurrency; lengths not published: GSM8K prompts of about 200 "
    "tokens with gpt-oss's chat template (isl 200) and medium-effort reasoning answers of about 1024 tokens (osl "
    "1024, under benchmark.py's 2048-token cap), both estimates; temperature 0 (benchmark.py's default)")

# (concurrency, block size, printed speedup, GSM8K tau at that block size, note on the cell)
_CELLS = ((1, 4, 1.3, 3.3, ""), (8, 4, 1.2, 3.3, ""), (16, 4, 1.3, 3.3, ""), (32, 4, 1.2, 3.3, ""),
          (1, 10, 1.8, 5.3, ""), (8, 10, 1.6, 5.3, ""), (16, 10, 1.6, 5.3, ""),
          (32, 10, 1.5, 5.3, "; the stored copy ends after '1.5' (the multiplication sign and anything after it cut "
                             "off): read as 1.5x, the table's one-decimal format"))


def _dflash_rows() -> list[dict]:
    rows = []
    for c, b, sp, tau, note in _CELLS:
        k = b - 1
        rows.append(dict(
            name=f"gpt-oss-120b DFlash block {b} (k = {k}), 1x H200, SGLang, GSM8K, concurrency {c} (z-lab card)",
            url=DFLASH_120B,
            locator=f"Evaluation, 'Speedup' GSM8K table, Concurrency {c}, Block Size = {b}: {sp}x; 'Acceptance Length' "
                    f"table, GSM8K, Block Size = {b}: {tau}",
            metric="e2e_speedup", measured=sp, assumed=DFLASH_ASSUMED + note,
            csv=dict(hardware="h200-sxm", n_gpus="1", tp="1", engine="sglang", engine_version="PR #16818",
                     engine_date="2026-02", model="gpt-oss-120b", precision="bf16", expert_precision="mxfp4",
                     kv_precision="bf16", method="dflash", k=str(k), tau=str(tau), tau_k=str(k),
                     concurrency=str(c), isl="200", osl="1024", memory_fraction="0.8")))
    return rows


ROUND10 = tuple(_dflash_rows())
