#!/usr/bin/env python3
"""Score how well a speech recogniser understands synthesised speech.

usage: scripts/intelligibility.py AUDIO SPOKEN.txt

AUDIO is any file ffmpeg can decode (MP3, WAV, ...). SPOKEN.txt holds the
words a listener should hear. The audio is decoded to 16 kHz mono 16-bit
WAV, transcribed by CMU PocketSphinx with its US English model, and the
transcript is compared word by word with SPOKEN.txt. One line is printed:

    words=N wer=W accuracy=A

N is the number of reference words, W the word error rate (substitutions,
insertions and deletions over N) and A is 1 - W. Words are compared in
lower case, apostrophes dropped, as runs of a-z, the same tokenisation as
internal/speak's TestSamples.

The recogniser is an independent, imperfect listener: its scores compare
voices and pipelines reading the same text, they are no absolute measure
of quality. English only.

Needs python3 and the Debian packages ffmpeg, pocketsphinx (for the
pocketsphinx_continuous command) and pocketsphinx-en-us; scripts/deps.sh
test installs them.
"""

import os
import re
import subprocess
import sys
import tempfile

MODEL = "/usr/share/pocketsphinx/model/en-us"


def words(text):
    """Return the comparable words of text."""
    return re.findall(r"[a-z]+", text.lower().replace("'", ""))


def edit_distance(ref, hyp):
    """Return the word-level Levenshtein distance between ref and hyp."""
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        cur = [i]
        for j, h in enumerate(hyp, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h)))
        prev = cur
    return prev[-1]


def run(cmd):
    """Run cmd and return its standard output; exit with its stderr on failure."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{cmd[0]} exited with {p.returncode}: {p.stderr.strip()[-2000:]}")
    return p.stdout


def transcribe(audio):
    """Return PocketSphinx's transcript of the audio file."""
    with tempfile.TemporaryDirectory() as tmp:
        wav = os.path.join(tmp, "16k.wav")
        run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", audio,
             "-ar", "16000", "-ac", "1", "-c:a", "pcm_s16le", wav])
        return run(["pocketsphinx_continuous", "-infile", wav,
                    "-hmm", os.path.join(MODEL, "en-us"),
                    "-lm", os.path.join(MODEL, "en-us.lm.bin"),
                    "-dict", os.path.join(MODEL, "cmudict-en-us.dict"),
                    "-logfn", os.devnull])


def main(argv):
    if len(argv) != 3:
        sys.exit(f"usage: {argv[0]} AUDIO SPOKEN.txt")
    with open(argv[2], encoding="utf-8") as f:
        ref = words(f.read())
    if not ref:
        sys.exit(f"{argv[2]}: no words to compare with")
    hyp = words(transcribe(argv[1]))
    wer = edit_distance(ref, hyp) / len(ref)
    print(f"words={len(ref)} wer={wer:.3f} accuracy={1 - wer:.3f}")


if __name__ == "__main__":
    main(sys.argv)
