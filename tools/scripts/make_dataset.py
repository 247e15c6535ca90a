#!/usr/bin/env python3
"""Writes the bundled demo dataset: the project's own text, byte-tokenised.

    make_dataset.py OUT.bin ROOT

Concatenates, in sorted path order, the Markdown, C++, TableGen and Python
files under ROOT (skipping build folders and test fixtures) and writes each
byte as one little-endian uint16 token, the flat format nanoGPT writes
(vocabulary 256). Deterministic: the same tree gives the same file.
"""
import os
import sys

SUFFIXES = (".md", ".cpp", ".h", ".td", ".py")
SKIP = {"build", ".git", "fixtures", "__pycache__"}


def main():
    out, root = sys.argv[1], sys.argv[2]
    paths = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP and not d.startswith("build"))
        paths += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(SUFFIXES)]
    data = bytearray()
    for path in sorted(paths):
        with open(path, "rb") as f:
            data += f.read()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tokens = bytearray()
    for b in data:
        tokens += bytes((b, 0))
    with open(out + ".tmp", "wb") as f:
        f.write(tokens)
    os.replace(out + ".tmp", out)
    print("demo dataset: %d tokens from %d files -> %s" % (len(data), len(paths), out))


if __name__ == "__main__":
    main()
