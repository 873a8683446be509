"""Line charts drawn as SVG text, no dependencies: a page of panels, each
with one line per series (bench/compare.py: throughput against
concurrency; bench/replication.py: throughput and lag over time)."""

import math


def page_start(width, height, title):
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'font-family="sans-serif" font-size="11">',
            f'<rect width="{width}" height="{height}" fill="white"/>',
            f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="14">{title}</text>']


def y_range(ys, log_y):
    """(low, high) of the y axis: decades when logarithmic, 0 to max+10%."""
    if not log_y:
        return 0, max(ys) * 1.1 or 1
    y0 = math.floor(math.log10(max(min(ys), 1e-3)))
    y1 = math.ceil(math.log10(max(ys)))
    return y0, (y1 if y1 > y0 else y0 + 1)


def tick_label(v, log_y):
    if log_y or v < 1000:
        return f"{v:g}"
    return f"{v / 1000:.0f}k" if v >= 10000 else f"{v / 1000:.1f}k"


def panel(out, origin, size, title, series, xticks, xlabel, log_x=False, log_y=False,
          markers=True):
    """One panel at `origin` (x, y) of `size` (w, h). `series`: (name, color,
    [(x, y)]); `xticks`: (x, label), which also set the x range."""
    (ox, oy), (pw, ph) = origin, size
    ml, mr, mt, mb = 62, 12, 34, 40
    fx = math.log2 if log_x else float
    xs = [fx(x) for x, _ in xticks] or [0.0]
    x0, x1 = min(xs), max(xs)
    if x1 == x0:
        x1 = x0 + 1
    y0, y1 = y_range([y for _, _, p in series for _, y in p] or [1], log_y)
    px0, px1, py0, py1 = ox + ml, ox + pw - mr, oy + ph - mb, oy + mt

    def X(v):
        return px0 + (fx(v) - x0) / (x1 - x0) * (px1 - px0)

    def Y(v):
        t = (math.log10(max(v, 1e-3)) - y0) / (y1 - y0) if log_y else (v - y0) / (y1 - y0)
        return py0 - t * (py0 - py1)

    out.append(f'<text x="{(px0 + px1) / 2}" y="{oy + 20}" text-anchor="middle" '
               f'font-weight="bold">{title}</text>')
    out.append(f'<rect x="{px0}" y="{py1}" width="{px1 - px0}" height="{py0 - py1}" '
               f'fill="none" stroke="#999"/>')
    for x, label in xticks:
        out.append(f'<line x1="{X(x):.1f}" y1="{py0}" x2="{X(x):.1f}" y2="{py0 + 4}" stroke="#999"/>')
        out.append(f'<text x="{X(x):.1f}" y="{py0 + 15}" text-anchor="middle">{label}</text>')
    ticks = ([10 ** e for e in range(int(y0), int(y1) + 1)] if log_y
             else [y0 + (y1 - y0) * k / 4 for k in range(5)])
    for v in ticks:
        out.append(f'<line x1="{px0}" y1="{Y(v):.1f}" x2="{px1}" y2="{Y(v):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{px0 - 4}" y="{Y(v) + 4:.1f}" text-anchor="end">'
                   f'{tick_label(v, log_y)}</text>')
    out.append(f'<text x="{(px0 + px1) / 2}" y="{py0 + 30}" text-anchor="middle">{xlabel}</text>')
    for _, color, p in series:
        if not p:
            continue
        path = " ".join(f"{'M' if k == 0 else 'L'}{X(x):.1f},{Y(y):.1f}" for k, (x, y) in enumerate(p))
        out.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for x, y in (p if markers else []):
            out.append(f'<circle cx="{X(x):.1f}" cy="{Y(y):.1f}" r="3" fill="{color}"/>')
    for k, (name, color, _) in enumerate(series):
        lx, ly = px0 + 8, py1 + 14 + k * 14
        out.append(f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 16}" y2="{ly - 4}" '
                   f'stroke="{color}" stroke-width="2"/>')
        out.append(f'<text x="{lx + 20}" y="{ly}">{name}</text>')
