"""svg - the few chart shapes the HTML report needs, as inline SVG, with no
plotting library: a timeline of rectangles, histograms, step curves."""
import html
import math

W, H = 900, 260
PAD_L, PAD_B, PAD_T, PAD_R = 70, 40, 20, 20
COLORS = {"switch_hg": "#4e79a7", "switch_other": "#f28e2b", "timer": "#59a14f", "interrupt": "#e15759",
          "hidden": "#9c9c9c", "other": "#b07aa1", "unexplainable": "#000000", "voluntary": "#d4c94a",
          "interval": "#bab0ac"}


def esc(s):
    return html.escape(str(s), quote=True)


def _frame(h, title, xlabel, ylabel):
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" '
            f'font-family="sans-serif" font-size="11">',
            f'<text x="{W / 2}" y="13" text-anchor="middle" font-size="13">{esc(title)}</text>',
            f'<text x="{W / 2}" y="{h - 4}" text-anchor="middle">{esc(xlabel)}</text>',
            f'<text x="12" y="{h / 2}" transform="rotate(-90 12 {h / 2})" text-anchor="middle">{esc(ylabel)}</text>']


def _axis(out, x0, x1, y0, y1, h, log=False, ylo=0, yhi=1, yfmt="{:.3g}"):
    """Axes with a few ticks; x in data units [x0, x1], y [ylo, yhi]."""
    pw, ph = W - PAD_L - PAD_R, h - PAD_T - PAD_B
    out.append(f'<line x1="{PAD_L}" y1="{h - PAD_B}" x2="{W - PAD_R}" y2="{h - PAD_B}" stroke="black"/>')
    out.append(f'<line x1="{PAD_L}" y1="{PAD_T}" x2="{PAD_L}" y2="{h - PAD_B}" stroke="black"/>')
    for i in range(6):
        if log:
            v = 10 ** (math.log10(x0) + (math.log10(x1) - math.log10(x0)) * i / 5)
        else:
            v = x0 + (x1 - x0) * i / 5
        x = PAD_L + pw * i / 5
        out.append(f'<text x="{x:.1f}" y="{h - PAD_B + 14}" text-anchor="middle">{v:.3g}</text>')
    for i in range(5):
        v = ylo + (yhi - ylo) * i / 4
        y = h - PAD_B - ph * i / 4
        out.append(f'<text x="{PAD_L - 4}" y="{y + 4:.1f}" text-anchor="end">{yfmt.format(v)}</text>')
    return pw, ph


def timeline(rows, t0, t1, title, legend, xlabel="time (ms)"):
    """rows: [(label, [(start, end, color, mark)])], times in ms; mark draws a red tick above."""
    h = PAD_T + PAD_B + 28 * len(rows) + 10
    out = _frame(h + 22, title, "", "")
    pw, _ = _axis(out, t0, t1, 0, 1, h, ylo=0, yhi=0, yfmt="")
    out.append(f'<text x="{W - PAD_R}" y="{h - PAD_B + 28}" text-anchor="end">{esc(xlabel)}</text>')
    sx = lambda t: PAD_L + (min(max(t, t0), t1) - t0) / (t1 - t0) * pw
    for i, (label, rects) in enumerate(rows):
        y = PAD_T + 10 + 28 * i
        out.append(f'<text x="{PAD_L - 4}" y="{y + 14}" text-anchor="end">{esc(label)}</text>')
        for a, b, color, mark in rects:
            if b < t0 or a > t1:
                continue
            x, w = sx(a), max(sx(b) - sx(a), 0.4)
            out.append(f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="18" fill="{color}"/>')
            if mark:
                out.append(f'<line x1="{x + w / 2:.2f}" y1="{y - 5}" x2="{x + w / 2:.2f}" y2="{y}" stroke="red" '
                           f'stroke-width="1.5"/>')
    lx = PAD_L
    for name, color in legend:
        out.append(f'<rect x="{lx}" y="{h + 8}" width="10" height="10" fill="{color}"/>'
                   f'<text x="{lx + 13}" y="{h + 17}">{esc(name)}</text>')
        lx += 14 + 7 * len(name) + 12
    out.append("</svg>")
    return "".join(out)


def histogram(values, title, xlabel, bins=40, log=True):
    if not values:
        return f"<p>{esc(title)}: no data</p>"
    lo, hi = min(values), max(values)
    if log:
        lo = max(lo, 1e-3)
        edges = [lo * (hi / lo) ** (i / bins) for i in range(bins + 1)] if hi > lo else [lo, lo * 1.01]
    else:
        edges = [lo + (hi - lo) * i / bins for i in range(bins + 1)] if hi > lo else [lo, lo + 1]
    counts = [0] * (len(edges) - 1)
    for v in values:
        for i in range(len(counts)):
            if v <= edges[i + 1] or i == len(counts) - 1:
                counts[i] += 1
                break
    out = _frame(H, title, xlabel, "gaps")
    pw, ph = _axis(out, edges[0], edges[-1], 0, 1, H, log=log, ylo=0, yhi=max(counts), yfmt="{:.0f}")
    bw = pw / len(counts)
    for i, c in enumerate(counts):
        bh = ph * c / max(counts)
        out.append(f'<rect x="{PAD_L + i * bw:.2f}" y="{H - PAD_B - bh:.2f}" width="{bw * 0.9:.2f}" '
                   f'height="{bh:.2f}" fill="#4e79a7"/>')
    out.append("</svg>")
    return "".join(out)


def curves(series, title, xlabel, ylabel, log_x=False):
    """series: [(name, color, [(x, y)])] drawn as steps."""
    pts = [p for _, _, s in series for p in s]
    if not pts:
        return f"<p>{esc(title)}: no data</p>"
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    if log_x:
        x0 = max(x0, 1e-3)
    y1 = max(p[1] for p in pts) or 1
    out = _frame(H, title, xlabel, ylabel)
    pw, ph = _axis(out, x0, x1 if x1 > x0 else x0 + 1, 0, 1, H, log=log_x, ylo=0, yhi=y1)

    def sx(x):
        if log_x:
            return PAD_L + (math.log10(max(x, x0)) - math.log10(x0)) / max(math.log10(x1) - math.log10(x0), 1e-9) * pw
        return PAD_L + (x - x0) / max(x1 - x0, 1e-12) * pw
    for k, (name, color, s) in enumerate(series):
        d = " ".join(f"{'M' if i == 0 else 'L'}{sx(x):.2f},{H - PAD_B - ph * y / y1:.2f}" for i, (x, y) in enumerate(s))
        out.append(f'<path d="{d}" fill="none" stroke="{color}" stroke-width="1.5"/>')
        out.append(f'<text x="{W - PAD_R - 4}" y="{PAD_T + 14 + 14 * k}" text-anchor="end" fill="{color}">'
                   f'{esc(name)}</text>')
    out.append("</svg>")
    return "".join(out)


def matrix(m, rows, cols, title):
    """A confusion matrix as a heat map: each cell shaded by its share of its
    row (recall's view), with the count written in it; the diagonal outlined."""
    cw, ch, left, top = 110, 30, 130, 50
    h = top + ch * len(rows) + 30
    w = left + cw * len(cols) + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
           f'font-family="sans-serif" font-size="11">',
           f'<text x="{w / 2}" y="13" text-anchor="middle" font-size="13">{esc(title)}</text>',
           f'<text x="{left + cw * len(cols) / 2}" y="{top - 22}" text-anchor="middle">inferred from '
           f'hourglass alone</text>',
           f'<text x="12" y="{top + ch * len(rows) / 2}" transform="rotate(-90 12 {top + ch * len(rows) / 2})" '
           f'text-anchor="middle">actual (kernel)</text>']
    for j, c in enumerate(cols):
        out.append(f'<text x="{left + cw * j + cw / 2}" y="{top - 6}" text-anchor="middle">{esc(c)}</text>')
    for i, r in enumerate(rows):
        y = top + ch * i
        out.append(f'<text x="{left - 6}" y="{y + ch / 2 + 4}" text-anchor="end">{esc(r)}</text>')
        n = sum(m[r].values()) or 1
        for j, c in enumerate(cols):
            v = m[r].get(c, 0)
            share = v / n
            # white to the cause's colour, by share of the row
            shade = int(255 - 200 * share)
            fill = f"rgb({shade},{shade},255)" if r != c else f"rgb({shade},255,{shade})"
            out.append(f'<rect x="{left + cw * j}" y="{y}" width="{cw}" height="{ch}" fill="{fill}" '
                       f'stroke="{"black" if r == c else "#ccc"}"/>')
            out.append(f'<text x="{left + cw * j + cw / 2}" y="{y + ch / 2 + 4}" text-anchor="middle">{v}</text>')
    out.append(f'<text x="{left}" y="{h - 8}">green: right, blue: wrong; darker = larger share of the row</text>')
    out.append("</svg>")
    return "".join(out)
