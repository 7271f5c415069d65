# SPDX-License-Identifier: BSD-3-Clause
"""A fabric picture (PNG, SVG) with matplotlib: nodes by tier, each link drawn
as two parallel lines (one per direction) coloured by utilisation, a pause
mark at the sender of a direction that was paused, a drop mark where packets
were dropped, down links dashed; a colour bar and a legend; the run's name.
A line standing for several directions (racks, groups) carries their mean
utilisation in data-util and is coloured by the busiest (data-util-max).

Switch drops (buffer, pipeline) come from rocelab-dp's end-of-run switch
table when it is given (rlreport), marked at the switch.

In the SVG every direction is a group with its values as attributes:
  <g id="rlviz-p0-line-3" data-run="NAME" class="rlviz-link" data-link="leaf0>spine0"
     data-util="0.7340" data-util-max=... data-util-peak=... data-paused=... data-drops=...
     data-pfc-tx=... data-members="2">
and every node: <g class="rlviz-node" data-node="leaf0" data-tier="rtsw" data-drops=...>
"""

import io
import re

from rllayout import TIERS, TIER_LABEL

# The colour scale (issue 39, "links at 2-3% load look like idle ones"): a link
# that sent nothing has a colour of its own, outside the warm scale of any load,
# and the scale is the square root of utilisation: 2% sits a seventh of the way
# up (a linear scale put it at 2%), and the busy range keeps its contrast (20%
# against 50% differ more than on a linear scale; a logarithmic one lost that).
CMAP_BASE, CMAP_FROM = "YlOrRd", 0.15  # the lightest load pale yellow, still visible on white
CMAP_STOPS = 9                          # anchors handed to the web pages' colouring
IDLE_COLOR = "#9ecae1"                  # pale blue: the direction sent nothing
IDLE_BELOW = 0.00005                    # utilisation under this (0.00% at 4 digits) is idle
SCALE_TICKS = [0.02, 0.05, 0.1, 0.25, 0.5, 1.0]


def scale(u):
    """Where utilisation u (0..1) sits on the colour scale (0..1): its square
    root (numbers or numpy arrays)."""
    import numpy as np
    return np.sqrt(np.clip(u, 0.0, 1.0))


def scale_inverse(p):
    """The utilisation at position p of the colour scale (scale's inverse)."""
    import numpy as np
    return np.clip(p, 0.0, 1.0) ** 2


def colormap():
    """The load colour map: YlOrRd without its near-white start, over positions of scale()."""
    import numpy as np
    from matplotlib import colormaps
    from matplotlib.colors import ListedColormap
    return ListedColormap(colormaps[CMAP_BASE](np.linspace(CMAP_FROM, 1.0, 256)), name="rlviz")


def colormap_stops():
    """CMAP_STOPS colours evenly spaced over the scale's positions, [[r, g, b], ...] 0..255."""
    cm = colormap()
    return [[round(255 * c) for c in cm(i / (CMAP_STOPS - 1))[:3]] for i in range(CMAP_STOPS)]


def util_color(u):
    """The colour of utilisation u as '#rrggbb': IDLE_COLOR when idle."""
    from matplotlib.colors import to_hex
    return IDLE_COLOR if u < IDLE_BELOW else to_hex(colormap()(float(scale(u))))


def util_norm():
    """A matplotlib norm mapping utilisation to the scale's positions."""
    from matplotlib.colors import FuncNorm
    return FuncNorm((scale, scale_inverse), vmin=0.0, vmax=1.0)


NODE_STYLE = {"host": ("s", "#6b8e23"), "rtsw": ("o", "#1f77b4"), "ctsw": ("o", "#2ca02c"),
              "atsw": ("o", "#9467bd")}
PAUSE_COLOR, DROP_COLOR, DOWN_COLOR = "#ff7f0e", "#d62728", "#7f7f7f"
MARK_AT = 0.18       # pause/drop marks sit this far along the line from the sender
OFFSET = 0.22        # the two directions of a link, apart by this share of a node gap
UTIL_DIGITS = 4      # data-util precision (the CSV's)
CROWDED = 20         # more switches than this in a tier: labels slanted
SUPTITLE_LINE_IN = 0.2  # inches a line of the title takes


class LineValue:
    """What one drawn direction shows: mean utilisation of its members, the
    highest sampled one, the largest paused share, drops and PFC frames summed,
    whether every member is up."""

    def __init__(self, summaries):
        n = len(summaries)
        self.util = sum(s.util for s in summaries) / n
        self.util_max = max(s.util for s in summaries)  # the busiest member (aggregated lines)
        self.util_peak = max(s.util_peak for s in summaries)
        self.queue_peak = max(s.queue_peak for s in summaries)
        self.paused = max(s.paused_frac for s in summaries)
        self.drops = sum(s.drops for s in summaries)
        self.pfc_tx = sum(s.pfc_tx for s in summaries)
        self.up = all(s.up for s in summaries)
        self.members = n


def line_values(scene, run, index=None, window_ns=None):
    """{line key: LineValue} over the whole run, or at sample `index`. window_ns:
    the time the run's busy and paused time is shared over (default: the run's
    length); the longest run's when runs are compared (a common time base)."""
    by_key = {c.key: c for c in run.chans}
    pick = ((lambda c: run.summary(c, window_ns)) if index is None
            else (lambda c: run.at(c, index)))
    return {ln.key: LineValue([pick(by_key[m]) for m in ln.members]) for ln in scene.lines}


def _geometry(scene):
    """Per line: start and end points, offset sideways per direction."""
    pos = {n.id: (n.x, n.y) for n in scene.nodes}
    counts = {}
    for n in scene.nodes:
        counts[n.tier] = counts.get(n.tier, 0) + 1
    gap = 1.0 / max(counts.values())
    out = {}
    for ln in scene.lines:
        (x0, y0), (x1, y1) = pos[ln.src], pos[ln.dst]
        # the upward direction to the left, the downward one to the right
        side = -1 if (y1, x1) > (y0, x0) else 1
        d = side * OFFSET * gap / 2
        out[ln.key] = ((x0 + d, y0), (x1 + d, y1))
    return out


def node_values(scene, switches):
    """{drawn node id: {"drops", "ecn", "pfc_rx"}} summed over the members, from
    the end-of-run switch table (rlreport.load_switches); {} without one."""
    out = {}
    for n in scene.nodes:
        rows = [switches[m] for m in n.members if m in (switches or {})]
        if rows:
            out[n.id] = {k: sum(r[k] for r in rows) for k in ("drops", "ecn", "pfc_rx")}
    return out


def _draw_nodes(ax, panel, scene, nodes):
    for j, n in enumerate(scene.nodes):
        marker, color = NODE_STYLE[n.tier]
        ax.plot([n.x], [n.y], marker=marker, ms=10 if len(scene.nodes) < 80 else 6,
                color=color, mec="black", mew=0.6, zorder=2, gid=f"rlviz-p{panel}-node-{j}")
        drops = nodes.get(n.id, {}).get("drops", 0)
        if drops:
            ax.plot([n.x + 0.025], [n.y - 0.08], marker="X", ms=9, color=DROP_COLOR,
                    mec="black", mew=0.5, zorder=4)
            ax.text(n.x + 0.04, n.y - 0.08, f"{drops} dropped", fontsize=6, color=DROP_COLOR,
                    va="center", zorder=5)


def _draw(ax, panel, scene, values, nodes, cmap, norm):
    geo = _geometry(scene)
    many = len(scene.lines) > 200
    for i, ln in enumerate(scene.lines):
        v = values[ln.key]
        (x0, y0), (x1, y1) = geo[ln.key]
        # an aggregated line shows its busiest member: a hot uplink stays visible in its group
        color = (DOWN_COLOR if not v.up else IDLE_COLOR if v.util_max < IDLE_BELOW
                 else cmap(norm(v.util_max)))
        ax.plot([x0, x1], [y0, y1], color=color, lw=0.8 if many else 2.2,
                ls="-" if v.up else "--", gid=f"rlviz-p{panel}-line-{i}", zorder=1,
                solid_capstyle="butt")
        mx, my = x0 + MARK_AT * (x1 - x0), y0 + MARK_AT * (y1 - y0)
        if v.paused > 0:
            ax.plot([mx], [my], marker="D", ms=4 if many else 7, color=PAUSE_COLOR,
                    mec="black", mew=0.5, zorder=3)
        if v.drops > 0:
            ax.plot([mx], [my], marker="X", ms=5 if many else 9, color=DROP_COLOR,
                    mec="black", mew=0.5, zorder=4)
    _draw_nodes(ax, panel, scene, nodes)
    fs = 7 if len(scene.nodes) < 60 else 5
    for n in scene.nodes:
        if n.tier == "host":
            ax.text(n.x, n.y - 0.14, n.label, ha="center", va="top", fontsize=fs,
                    rotation=90 if len(scene.nodes) > 24 else 0, zorder=5)
        else:
            crowded = sum(1 for m in scene.nodes if m.tier == n.tier) > CROWDED
            ax.text(n.x, n.y + 0.09, n.label, ha="left" if crowded else "center", va="bottom",
                    fontsize=fs, zorder=5, rotation=35 if crowded else 0,
                    bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8})


def _legend(ax, scene, plt):
    from matplotlib.lines import Line2D
    handles = [Line2D([], [], marker=NODE_STYLE[t][0], color=NODE_STYLE[t][1], ls="",
                      mec="black", label=TIER_LABEL[t]) for t in TIERS
               if any(n.tier == t for n in scene.nodes)]
    handles += [Line2D([], [], marker="D", color=PAUSE_COLOR, ls="", mec="black",
                       label="sender paused (PFC)"),
                Line2D([], [], marker="X", color=DROP_COLOR, ls="", mec="black",
                       label="drops"),
                Line2D([], [], color=IDLE_COLOR, lw=2.2, label="idle (sent nothing)"),
                Line2D([], [], color=DOWN_COLOR, ls="--", label="link down")]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.02), fontsize=7,
              frameon=False, ncol=len(handles))


def _attrs(ln, v):
    return (f'class="rlviz-link" data-link="{_esc(ln.key)}" data-util="{v.util:.{UTIL_DIGITS}f}" '
            f'data-util-max="{v.util_max:.{UTIL_DIGITS}f}" '
            f'data-util-peak="{v.util_peak:.{UTIL_DIGITS}f}" data-paused="{v.paused:.4f}" '
            f'data-drops="{v.drops}" data-pfc-tx="{v.pfc_tx}" data-queue-peak="{v.queue_peak}" '
            f'data-up="{int(v.up)}" data-members="{v.members}"')


def _esc(text):
    return (text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
            .replace(">", "&gt;"))


def _svg_with_attrs(svg, panel, sub, scene, values, nodes):
    """matplotlib writes <g id="rlviz-pP-line-N"> and <g id="rlviz-pP-node-N">:
    add the direction's and the node's values."""
    run = _esc(sub)

    def add(m):
        ln = scene.lines[int(m.group(1))]
        return (f'<g id="rlviz-p{panel}-line-{m.group(1)}" data-run="{run}" '
                f'{_attrs(ln, values[ln.key])}>')

    def add_node(m):
        n = scene.nodes[int(m.group(1))]
        extra = "".join(f' data-{k.replace("_", "-")}="{v}"' for k, v in nodes.get(n.id, {}).items())
        return (f'<g id="rlviz-p{panel}-node-{m.group(1)}" data-run="{run}" class="rlviz-node" '
                f'data-node="{_esc(n.id)}" data-tier="{n.tier}"{extra}>')
    svg = re.sub(rf'<g id="rlviz-p{panel}-line-(\d+)">', add, svg)
    return re.sub(rf'<g id="rlviz-p{panel}-node-(\d+)">', add_node, svg)


def draw(panels, title, png=None, svg=None, columns=None):
    """Draw one or more (subtitle, scene, values, nodes) panels side by side into a
    PNG and/or an SVG file, at most `columns` per row (default: all in one).
    Returns the number of files written."""
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "rocelab"  # same input, same SVG
    matplotlib.rcParams["svg.fonttype"] = "none"     # names stay text (searchable, smaller)
    import matplotlib.pyplot as plt

    widest = max(max(sum(1 for n in p[1].nodes if n.tier == t) for t in TIERS) for p in panels)
    tiers = max(len({n.tier for n in p[1].nodes}) for p in panels)
    w = min(30.0, max(6.0, 0.32 * widest + 2.5))
    cols = min(len(panels), columns or len(panels))
    rows = -(-len(panels) // cols)
    fig, grid = plt.subplots(rows, cols, figsize=(w * cols + 1.5, (1.3 * tiers + 1.6) * rows),
                             squeeze=False)
    axes = [list(grid.flat)]
    for ax in axes[0][len(panels):]:
        ax.set_visible(False)
    cmap, norm = colormap(), util_norm()
    for p, (ax, (sub, scene, values, nodes)) in enumerate(zip(axes[0], panels)):
        _draw(ax, p, scene, values, nodes, cmap, norm)
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.75, max(n.y for n in scene.nodes) + 0.35)
        ax.set_yticks(sorted({n.y for n in scene.nodes}))
        ax.set_yticklabels([TIER_LABEL[TIERS[int(y)]] for y in sorted({n.y for n in scene.nodes})],
                           fontsize=8)
        ax.set_xticks([])
        for s in ("top", "right", "bottom"):
            ax.spines[s].set_visible(False)
        ax.set_title(sub + (" (aggregated: racks/groups, coloured by the busiest member)"
                            if scene.aggregated else ""), fontsize=9)
    _legend(axes[0][(len(panels) - 1) // cols * cols + (min(cols, len(panels)) - 1) // 2],
            panels[-1][1], plt)
    sm = matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap)
    cb = fig.colorbar(sm, ax=list(grid.flat), fraction=0.025 / rows, pad=0.02)
    cb.set_ticks(SCALE_TICKS)
    cb.set_ticklabels([f"{100 * t:g}%" for t in SCALE_TICKS])
    cb.set_label("link utilisation (square-root scale)", fontsize=8)
    # anchored at its last line's foot, where one line stood: more lines go up, not over the panels
    fig.suptitle(title, fontsize=11, va="bottom", y=0.98 - SUPTITLE_LINE_IN / fig.get_size_inches()[1])
    written = 0
    if png:
        fig.savefig(png, dpi=110, bbox_inches="tight")
        written += 1
    if svg:
        buf = io.StringIO()
        fig.savefig(buf, format="svg", bbox_inches="tight")
        text = buf.getvalue()
        for p, (sub, scene, values, nodes) in enumerate(panels):
            text = _svg_with_attrs(text, p, sub, scene, values, nodes)
        with open(svg, "w") as f:
            f.write(text)
        written += 1
    plt.close(fig)
    return written
