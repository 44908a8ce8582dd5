"""A scripted model for the second-opinion tests, run by a real daemon as `llm_command`:
`python llm_script_model.py MODE_FILE RECORD_FILE`. It appends each prompt to RECORD_FILE and
answers by the mode MODE_FILE holds: "restates" (the first candidate), "distinct", "stall"
(sleeps far past any timeout), "fail" (exit 3), "garbage" (prose). A prompt for proposals (gap
analysis, session review) gets one Quirk proposal whatever the mode but stall and fail."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

PROPOSED = "The staging VPN drops idle SSH sessions after five minutes."


def main() -> int:
    mode_file, record_file = sys.argv[1], sys.argv[2]
    prompt = sys.stdin.read()
    with open(record_file, "a", encoding="utf-8") as record:
        record.write(prompt + "\n\x00\n")
    mode = Path(mode_file).read_text(encoding="utf-8").strip()
    sys.stderr.write("thinking\n")
    if mode == "stall":
        time.sleep(600)
    if mode == "fail":
        return 3
    if mode == "garbage":
        sys.stdout.write("I think the first one, probably." + "\n")
        return 0
    if "New memory:" not in prompt:
        sys.stdout.write(
            json.dumps({"memories": [{"category": "Quirk", "content": PROPOSED}]}) + "\n"
        )
        return 0
    restates = 1 if mode == "restates" else None
    sys.stdout.write(json.dumps({"restates": restates, "reason": f"scripted {mode}"}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
