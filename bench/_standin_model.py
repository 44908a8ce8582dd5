"""A scripted stand-in for a model, run by a real daemon as `llm_command` in
`bench/redundancy.py`: `python bench/_standin_model.py [--stall | --fail | --garbage]
[--threshold T]`.

It reads a redundancy prompt (`memd.core.llm.prompts.redundancy`) on stdin, finds the numbered
existing memories and the new memory by the prompt's own layout ("Existing memories:" then
"N. text" lines, a blank line, "New memory:" then the text), and answers
`{"restates": N | null, "reason": "..."}` by a simple, general rule: it stands in for a model, it
is not memd's rule, and no sentence of any data set is known to it.

The rule, per existing memory (the first that passes is named):
- Content words: lowercase words and numbers, a trailing plural or verb "s" / "es" / "ed" /
  "ing" cut, then a final "e" ("rotate", "rotated" and "rotates" are one word), leaving out
  STOP_WORDS (small words and filler such as "always", "make sure", "please").
- Not a restatement if the new memory has a number the existing one lacks, or only one of the
  two says a negating word (NEGATORS: "not", "never", "avoid", "disable", "block", ...), or the
  new one has a condition word (CONDITIONS: "unless", "except", "only", "if", ...) the existing
  one lacks.
- Else a restatement if every content word of the new memory is in the existing one, or the
  two sets' Jaccard overlap is at least the threshold (default THRESHOLD).

Modes for the fail-open checks: `--stall` sleeps far past any timeout, `--fail` exits with
status 3, `--garbage` prints prose that is not the JSON asked for. A prompt it cannot read
(another prompt, say) gets `{"restates": null}`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time

THRESHOLD = 0.7
_STOP_WORDS_TEXT = """
a an the is are be been being was were to of in on at by for from with as into onto and or
it its this that these those there their them they we our you your i me my he she his her
do does did has have had will would should shall can could may might must
always please make sure note remember really just try be also
"""
_NEGATORS_TEXT = """
not no never without none nothing nobody cannot cant dont doesnt isnt arent wont avoid
disable disabled block blocked deny denied forbid forbidden prohibit prohibited stop off
"""
_CONDITIONS_TEXT = "unless except only if when whenever until after once"
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())
NEGATORS = frozenset(_NEGATORS_TEXT.split())
CONDITIONS = frozenset(_CONDITIONS_TEXT.split())
_WORD = re.compile(r"[a-z0-9]+(?:[._/-][a-z0-9]+)*")
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_ITEM = re.compile(r"^(\d+)\. (.*)$")


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("'", "").replace("\u2019", ""))


def content(text: str) -> frozenset[str]:
    """The content words of `text` (see the module rules)."""
    return frozenset(_stem(w) for w in _words(text) if w not in STOP_WORDS)


def restates(existing: str, new: str, threshold: float = THRESHOLD) -> bool:
    """Whether the stand-in calls `new` a restatement of `existing` (see the module rules)."""
    old_words, new_words = set(_words(existing)), set(_words(new))
    if set(_NUMBER.findall(new)) - set(_NUMBER.findall(existing)):
        return False
    if bool(old_words & NEGATORS) != bool(new_words & NEGATORS):
        return False
    if (new_words & CONDITIONS) - old_words:
        return False
    old, fresh = content(existing), content(new)
    if not fresh:
        return False
    return fresh <= old or len(old & fresh) / len(old | fresh) >= threshold


def parse_prompt(prompt: str) -> tuple[list[str], str] | None:
    """The numbered existing memories and the new memory of a redundancy prompt (None: not one)."""
    lines = prompt.splitlines()
    try:
        start, middle = lines.index("Existing memories:"), lines.index("New memory:")
    except ValueError:
        return None
    candidates = []
    for line in lines[start + 1 : middle]:
        item = _ITEM.match(line)
        if item is not None:
            candidates.append(item.group(2))
    new = lines[middle + 1] if middle + 1 < len(lines) else ""
    return (candidates, new) if candidates and new.strip() else None


def answer(prompt: str, threshold: float = THRESHOLD) -> dict[str, object]:
    """The stand-in's JSON answer to `prompt`."""
    parsed = parse_prompt(prompt)
    if parsed is None:
        return {"restates": None, "reason": "Not a prompt the stand-in reads."}
    candidates, new = parsed
    for number, existing in enumerate(candidates, 1):
        if restates(existing, new, threshold):
            return {"restates": number, "reason": f"Same content words as memory {number}."}
    return {"restates": None, "reason": "No memory says the same with the same values."}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--stall", action="store_true", help="sleep far past any timeout")
    mode.add_argument("--fail", action="store_true", help="exit with status 3")
    mode.add_argument("--garbage", action="store_true", help="print prose, not JSON")
    parser.add_argument("--threshold", type=float, default=THRESHOLD)
    args = parser.parse_args(argv)
    prompt = sys.stdin.read()
    if args.stall:
        time.sleep(600)
    if args.fail:
        return 3
    if args.garbage:
        sys.stdout.write("Hmm, the first one looks about the same to me, I think.\n")
        return 0
    sys.stdout.write(json.dumps(answer(prompt, args.threshold)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
