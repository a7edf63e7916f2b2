"""Build the bundled demo data set from ../shared/data/mmlu_pro_tiger (run once; output committed).

Keeps the 26 models that answered all 12,032 MMLU-Pro questions: question_id, category and one
0/1 column per model (strict correctness: no extracted answer = wrong), gzip-compressed CSV.
"""

import csv
import gzip
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT.parent / "shared" / "data" / "mmlu_pro_tiger" / "mmlu_pro_correct.csv.gz"
DST = ROOT / "src" / "llm_power" / "data" / "mmlu_pro_correct.csv.gz"

with gzip.open(SRC, "rt", encoding="utf-8", newline="") as fh:
    rows = list(csv.reader(fh))
header, body = rows[0], rows[1:]
complete = [j for j in range(2, len(header)) if all(r[j] != "" for r in body)]
with gzip.open(DST, "wt", encoding="utf-8", newline="", compresslevel=9) as out:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([header[0], header[1]] + [header[j] for j in complete])
    for r in body:
        writer.writerow([r[0], r[1]] + [r[j] for j in complete])
print(f"wrote {DST} ({DST.stat().st_size:,} bytes): {len(body):,} items x {len(complete)} models")
