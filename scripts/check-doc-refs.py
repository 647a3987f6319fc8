#!/usr/bin/env python3
"""Checks that every reference to the project's docs resolves (docs/reliability.md "Doc references").

Code comments, docs and validation files point readers at `docs/NAME.md` and often at a part of
it, `docs/NAME.md "Section"`. A reference resolves when the file exists and, with a section, when
the text in quotes is part (case-insensitive) of one of the file's headings, bold labels
(`**Label.**`) or first table cells. Run: scripts/check-doc-refs.py [ROOT]; `--self-test` checks
the checker on a tree it makes. Exit 1 and one line per broken reference (file: what is wrong).
"""
import os
import re
import sys
import tempfile

# Files of other repositories that validation sources cite by their own docs/ paths.
EXTERNAL = {
    "docs/performance-summary.md",  # NVIDIA-NeMo/Megatron-Bridge
    "docs/configurations.md",  # foundation-model-stack/fms-fsdp
    "docs/performance-ndmv4.md",  # microsoft/mscclpp
    "docs/slurm-perf-cluster.md",  # NVIDIA/deepops, before its move to docs/slurm-cluster/
}
SCANNED = re.compile(r"\.(md|cpp|hpp|h|py|yaml|sh|txt|cmake|ui|qml)$")
SKIPPED_DIRS = re.compile(r"^(\..*|build.*|_deps|third_party)$")
# docs/NAME.md, then optionally a quoted section on the same line or, after a line break inside a
# comment (// or #), on the next.
REFERENCE = re.compile(
    r'(docs/[A-Za-z0-9_.-]+\.md)(?:,?[ \t]*(?:\n[ \t]*(?://|#)?[ \t]*)?"([^"\n]+)")?'
)


def anchors_of(text):
    found = [m.group(1) for m in re.finditer(r"(?m)^#+\s+(.*)$", text)]
    found += [m.group(1) for m in re.finditer(r"\*\*([^*]+)\*\*", text)]
    found += [m.group(1) for m in re.finditer(r"(?m)^\| `?([^|`]+)`? \|", text)]
    return [a.strip().lower() for a in found]


def files_under(root):
    for directory, subdirs, names in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if not SKIPPED_DIRS.match(d))
        for name in sorted(names):
            yield os.path.relpath(os.path.join(directory, name), root)


def broken_references(root):
    docs = {}
    docs_dir = os.path.join(root, "docs")
    for name in sorted(os.listdir(docs_dir)) if os.path.isdir(docs_dir) else []:
        if name.endswith(".md"):
            with open(os.path.join(docs_dir, name), encoding="utf-8") as f:
                docs["docs/" + name] = anchors_of(f.read())
    broken = []
    for path in files_under(root):
        if not SCANNED.search(path) or path == os.path.join("scripts", "check-doc-refs.py"):
            continue
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        for m in REFERENCE.finditer(text):
            doc, section = m.group(1), m.group(2)
            if doc in EXTERNAL:
                continue
            line = text.count("\n", 0, m.start()) + 1
            if doc not in docs:
                broken.append(f"{path}:{line}: {doc} does not exist")
            elif section:
                key = section.strip().rstrip(".").lower()
                if not any(key in a for a in docs[doc]):
                    broken.append(f'{path}:{line}: {doc} has no section "{section}"')
    return broken


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        with open(os.path.join(root, "docs", "a.md"), "w", encoding="utf-8") as f:
            f.write("# A\n\n## Real section\n\n**A label.** text\n")
        with open(os.path.join(root, "x.cpp"), "w", encoding="utf-8") as f:
            f.write(
                '// docs/a.md "Real section" and docs/a.md "A label"\n'
                '// docs/a.md "Gone section", docs/b.md, docs/a.md\n// "Also gone"\n'
            )
        got = broken_references(root)
        want = [
            'x.cpp:2: docs/a.md has no section "Gone section"',
            "x.cpp:2: docs/b.md does not exist",
            'x.cpp:2: docs/a.md has no section "Also gone"',
        ]
        if got != want:
            print("self-test failed:\n  got  " + "\n       ".join(got))
            return 1
    print("self-test passed")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    broken = broken_references(root)
    for b in broken:
        print(b)
    print(f"{len(broken)} broken doc reference(s)" if broken else "every doc reference resolves")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
