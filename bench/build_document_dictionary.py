"""Build the preset dictionary ``results.db`` compresses run documents with (deflate's zdict).

A run's document (``storage/documents.py``) is mostly the same English and JSON keys run
after run: coverage reasons, fix hints, channel names. Deflate can start from up to 32 KiB
of text it may refer back to, so those strings cost a few bytes each instead of being
spelled out in every run. The dictionary is the packed documents of the bundled samples'
runs (``samples/traces`` scored with ``samples/policy.yaml``), most common last (deflate
reaches the end of the window most cheaply).

A stored document names its dictionary by Adler-32 (zlib's header), so a shipped
dictionary must never change: this script writes a NEW file
(``rampart_otel/storage/document-dictionary-N.bin``) and ``documents.DICTIONARIES`` keeps
every earlier one, for the documents written with it.

Run: ``python bench/build_document_dictionary.py N``
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WINDOW = 32 * 1024
SEPARATOR = b'","'  # between two strings of a list, or a key and its string


def main() -> None:
    number = int(sys.argv[1])
    target = ROOT / "rampart_otel" / "storage" / f"document-dictionary-{number}.bin"
    if target.exists():
        raise SystemExit(f"{target} exists: a shipped dictionary never changes")
    from rampart_otel.storage.documents import packed_text

    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        subprocess.run(
            [sys.executable, "-m", "rampart_otel.cli", "score", str(ROOT / "samples/traces"),
             "--policy", str(ROOT / "samples/policy.yaml"), "--format", "json", "-o",
             str(report)],
            check=False,
        )  # fmt: skip
        results = json.loads(report.read_text())["results"]
    runs: dict[str, dict[str, dict]] = collections.defaultdict(dict)
    for result in results:
        runs[result["run_id"]][result["check"]] = result
    texts = [packed_text(documents) for documents in runs.values()]
    # Lines of text seen in most runs last: fewer bytes to reach them. The text is compact
    # JSON since dictionary 2 (dictionary 1 was cut at json.dumps's '", "').
    counts = collections.Counter(
        piece for text in texts for piece in set(text.split(SEPARATOR)) if len(piece) > 8
    )
    pieces = [piece for piece, _ in sorted(counts.items(), key=lambda kv: (kv[1], kv[0]))]
    dictionary = SEPARATOR.join(pieces)[-WINDOW:]
    target.write_bytes(dictionary)
    print(f"{target}: {len(dictionary)} bytes, Adler-32 {zlib.adler32(dictionary):#010x}")


if __name__ == "__main__":
    main()
