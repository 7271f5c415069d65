# SPDX-License-Identifier: BSD-3-Clause
"""An experiment's pictures (scripts/experiment.py): busbw against size, a panel per
placement, and the active QPs per NIC over virtual time from --coll-series files."""
import csv
import os
import re
import textwrap


def plot(exp, results, out_png, line_rate=None):
    """busbw against message size, a panel per placement. The y axis starts at 0, so that
    gaps between variants are not magnified; line_rate (GB/s: the slowest host link's
    rate, what a ring's busbw can reach) is drawn as a dashed line; the title is wrapped
    to the figure's width. Returns the figure (matplotlib's)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    placements = list(exp["placements"])
    width = 6.5 * len(placements)
    fig, axes = plt.subplots(1, len(placements), figsize=(width, 4.5),
                             squeeze=False, sharey=True)
    top = 0
    for ax, pl in zip(axes[0], placements):
        for v in exp["variants"]:
            pts = sorted((s, b) for (lab, p, s), b in results.items() if lab == v["label"] and p == pl)
            if not pts:
                continue
            ax.plot([s / 2**20 for s, _ in pts], [b for _, b in pts], marker="o", label=v["label"])
            top = max([top] + [b for _, b in pts])
        if line_rate:
            ax.axhline(line_rate, color="black", linestyle="--", linewidth=1,
                       label=f"line rate ({line_rate:g} GB/s)")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size (MiB)")
        ax.set_title(f"placement: {pl}")
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylim(0, 1.08 * max(top, line_rate or 0) or 1)  # (shared by every panel)
    axes[0][0].set_ylabel("bus bandwidth (GB/s), mean over seeds")
    axes[0][-1].legend(fontsize=8, loc="best")
    # about 9 characters per inch at the title's size: wrapped, it stays inside the image
    fig.suptitle("\n".join(textwrap.wrap(exp["title"], max(30, int(width * 9)))))
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    return fig


def series_interval(coll):
    """The series' row interval: the collective's key series=, else rocelab-dp's 10us."""
    m = re.search(r"(?:^|,)series=([^,]+)", coll)
    return m.group(1) if m else "10us"


def size_label(size):
    """A size as in file names and titles: 1MiB, 64KiB, 512B."""
    for unit, b in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= b and size % b == 0:
            return f"{size // b}{unit}"
    return f"{size}B"


def read_series(path):
    """{size: [(t_us, dt_us, mean, max)]} of a --coll-series file ({} if absent)."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            out.setdefault(int(r["size"]), []).append(
                (float(r["t_us"]), float(r["dt_us"]), float(r["qps_mean"]), int(r["qps_max"])))
    return out


def plot_series(exp, out, series_files):
    """series/active-qps-SIZE.png per size: mean active QPs per NIC over virtual time
    (thick) and the most on one NIC (thin, same colour), variants overlaid, one panel per
    placement. series_files: {(label, placement): path} (first seed). Returns
    [(size, png name relative to out)]."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    data = {k: read_series(p) for k, p in series_files.items()}
    sizes = sorted({s for d in data.values() for s in d})
    placements = list(exp["placements"])
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    pngs = []
    for size in sizes:
        fig, axes = plt.subplots(1, len(placements), figsize=(6.5 * len(placements), 4.2),
                                 squeeze=False, sharey=True)
        for ax, pl in zip(axes[0], placements):
            for i, v in enumerate(exp["variants"]):
                rows = data.get((v["label"], pl), {}).get(size)
                if not rows:
                    continue
                # a row holds over [t, t + dt): steps, closed at the last row's end
                t = [r[0] for r in rows] + [rows[-1][0] + rows[-1][1]]
                c = colours[i % len(colours)]
                ax.step(t, [r[2] for r in rows] + [rows[-1][2]], where="post", color=c,
                        linewidth=1.6, label=v["label"])
                ax.step(t, [r[3] for r in rows] + [rows[-1][3]], where="post", color=c,
                        linewidth=0.6, alpha=0.7)
            ax.set_xlabel("virtual time from the size's start (us)")
            ax.set_title(f"placement: {pl}")
            ax.grid(True, alpha=0.3)
        axes[0][0].set_ylabel("active QPs per NIC: mean (thick), max (thin)")
        axes[0][-1].legend(fontsize=8, loc="best")
        fig.suptitle("\n".join(textwrap.wrap(f"{exp['title']}: {size_label(size)}",
                                               70 * len(placements))), fontsize=10)
        fig.tight_layout()
        name = os.path.join("series", f"active-qps-{size_label(size)}.png")
        fig.savefig(os.path.join(out, name), dpi=100)
        plt.close(fig)
        pngs.append((size, name))
    return pngs
