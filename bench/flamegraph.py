#!/usr/bin/env python3
"""Flame graph of a `perf script` capture, as a self-contained SVG.

    perf script -i perf.data | python3 bench/flamegraph.py --title "..." > out.svg

Each sample's call stack (leaf first in perf's output) becomes one path
from the root (the thread name) to the leaf; a frame's width is the share
of samples that passed through it. Inlined frames count as frames, so a
Rust async state machine shows the functions inlined into it. Frames under
--min-percent are left out to keep the file small. Kernel frames are drawn
in blue-grey, libc and the allocator in green, our code in warm colours.

Also prints, on stderr, the functions with the most samples on top of the
stack ("self" time), which is where a profile is usually read first.
"""

import argparse
import collections
import html
import re
import sys
import zlib

FRAME = re.compile(r"^\s*[0-9a-f]+\s+(.*?)(?:\+0x[0-9a-f]+)?\s+\((.*)\)\s*$")


def read_stacks(lines):
    """Yields (thread, [frames root first], dso of the leaf) per sample."""
    thread, frames = None, []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if thread is not None and frames:
                yield thread, frames[::-1]
            thread, frames = None, []
        elif not line[0].isspace():
            thread = line.split()[0]
        else:
            m = FRAME.match(line)
            if m:
                sym, dso = m.group(1), m.group(2)
                if sym == "[unknown]":
                    continue
                frames.append((sym, dso))
    if thread is not None and frames:
        yield thread, frames[::-1]


def short(sym):
    """Drops generic arguments (`Foo<K, V>` -> `Foo`) and closure noise so
    names fit their boxes; qualified paths (`<T as Trait>::f`) stay."""
    out, skip = [], 0
    for i, ch in enumerate(sym):
        if skip:
            skip += {"<": 1, ">": -1}.get(ch, 0)
            continue
        if ch == "<" and i > 0 and (sym[i - 1].isalnum() or sym[i - 1] == "_"):
            skip = 1
            continue
        out.append(ch)
    s = "".join(out).replace("::{{closure}}", "{closure}")
    return s if s.strip() else sym


def colour(name, dso):
    h = zlib.crc32(name.encode())
    if "kernel" in dso:
        return f"rgb({100 + h % 40},{120 + h % 50},{170 + h % 60})"
    if "libc" in dso or name.startswith(("mi_", "_mi_")):
        return f"rgb({90 + h % 60},{170 + h % 60},{90 + h % 40})"
    return f"rgb({205 + h % 50},{90 + h % 110},{40 + h % 40})"


class Node:
    __slots__ = ("count", "children", "dso")

    def __init__(self, dso=""):
        self.count = 0
        self.children = {}
        self.dso = dso


def build(stacks):
    root = Node()
    leaf_self = collections.Counter()
    total = 0
    for thread, frames in stacks:
        total += 1
        node = root
        node.count += 1
        path = [(thread, "thread")] + [(short(s), d) for s, d in frames]
        for name, dso in path:
            child = node.children.get(name)
            if child is None:
                child = node.children[name] = Node(dso)
            child.count += 1
            node = child
        leaf_self[short(frames[-1][0])] += 1
    return root, total, leaf_self


def render(root, total, title, min_percent, width=1400, row=17):
    boxes = []
    depth_max = 0

    def walk(node, name, x, depth):
        nonlocal depth_max
        w = node.count / total * width
        if node.count * 100.0 / total < min_percent:
            return
        depth_max = max(depth_max, depth)
        boxes.append((x, depth, w, name, node))
        cx = x
        for cname, child in sorted(node.children.items()):
            walk(child, cname, cx, depth + 1)
            cx += child.count / total * width

    x = 0.0
    for name, child in sorted(root.children.items()):
        walk(child, name, x, 0)
        x += child.count / total * width
    top = 40
    height = top + (depth_max + 1) * row + 10
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width + 20}" height="{height}" '
        f'font-family="monospace" font-size="11">',
        f'<rect width="100%" height="100%" fill="#fafaf5"/>',
        f'<text x="10" y="20" font-size="15">{html.escape(title)}</text>',
        f'<text x="10" y="34" fill="#555">{total} samples; hover a frame for its share; '
        f'kernel blue-grey, libc/allocator green, lockstep warm</text>',
    ]
    for x, depth, w, name, node in boxes:
        # Root (thread) at the bottom, callees above: a flame graph.
        y = height - 10 - (depth + 1) * row
        pct = node.count * 100.0 / total
        label = html.escape(f"{name} ({node.count} samples, {pct:.2f}%)")
        out.append(f'<g><title>{label}</title>'
                   f'<rect x="{10 + x:.1f}" y="{y}" width="{max(w - 0.5, 0.5):.1f}" '
                   f'height="{row - 1}" fill="{colour(name, node.dso)}" rx="1"/>')
        chars = int((w - 4) / 6.6)
        if chars >= 3:
            text = name if len(name) <= chars else name[: chars - 2] + ".."
            out.append(f'<text x="{12 + x:.1f}" y="{y + row - 5}">{html.escape(text)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input", nargs="?", help="perf script output (default: stdin)")
    ap.add_argument("--title", default="lockstep flame graph")
    ap.add_argument("--min-percent", type=float, default=0.1)
    ap.add_argument("--top", type=int, default=25, help="self-time functions to print")
    args = ap.parse_args()
    src = open(args.input, errors="replace") if args.input else sys.stdin
    root, total, leaf_self = build(read_stacks(src))
    if total == 0:
        sys.exit("flamegraph: no samples with call stacks in the input")
    sys.stdout.write(render(root, total, args.title, args.min_percent))
    print(f"{total} samples; most self time:", file=sys.stderr)
    for name, n in leaf_self.most_common(args.top):
        print(f"{100.0 * n / total:6.2f}%  {name[:130]}", file=sys.stderr)


if __name__ == "__main__":
    main()
