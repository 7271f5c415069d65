# SPDX-License-Identifier: BSD-3-Clause
"""A Scene as inline SVG for web pages (the time-slider HTML and the live
dashboard), plus the small JavaScript both use to colour it.

Every element a script updates has an id under the panel's prefix:
  line  PFX-lI  (class "ln", data-link="A>B")   one per drawn direction
  mark  PFX-pI  (class "pm")  pause mark at the sender, hidden unless paused
  mark  PFX-dI  (class "dm")  drop mark, hidden unless drops in the interval
  node  <g class="node" data-node=NAME data-tier=TIER>
"""

import json
from html import escape

from rllayout import TIERS, TIER_LABEL

TIER_GAP = 110   # px between tiers
NODE_GAP = 34    # px per node of the widest tier
MARGIN = 60      # px left (tier labels) and top
NODE_FILL = {"host": "#6b8e23", "rtsw": "#1f77b4", "ctsw": "#2ca02c", "atsw": "#9467bd"}
OFFSET = 3       # px between a link's two directions
MARK_AT = 0.18   # share of the line from the sender where marks sit


def color_js():
    """The pages' colouring code and legend, with the PNG's colour scale
    (rlpicture: the same stops, knee and idle colour)."""
    import rlpicture as pic
    stops = pic.colormap_stops()
    consts = (f"const RL_STOPS={json.dumps(stops)},RL_IDLE='{pic.IDLE_COLOR}',"
              f"RL_IDLE_BELOW={pic.IDLE_BELOW};")
    return consts + COLOR_JS, _legend_html(stops, pic)


# rlColor: idle its own colour; else the scale's position sqrt(u) (rlpicture.scale)
# between the stops. rlPaint: v.gbps (when given) goes in the tooltip.
COLOR_JS = """
function rlColor(u){u=Math.max(0,Math.min(1,u));if(u<RL_IDLE_BELOW)return RL_IDLE;
const n=RL_STOPS.length-1,f=Math.sqrt(u)*n,i=Math.min(n-1,Math.floor(f)),t=f-i;
const a=RL_STOPS[i],b=RL_STOPS[i+1];return 'rgb('+a.map((v,k)=>Math.round(v+(b[k]-v)*t)).join(',')+')';}
function rlPaint(pfx,i,v){const l=document.getElementById(pfx+'-l'+i);if(!l)return;
l.setAttribute('stroke',v.up?rlColor(v.util):'#7f7f7f');l.setAttribute('stroke-dasharray',v.up?'':'6,4');
l.setAttribute('data-util',v.util.toFixed(4));
l.querySelector('title').textContent=l.dataset.link+': '+(100*v.util).toFixed(1)+'% busy'+
(v.gbps===undefined?'':', '+v.gbps.toFixed(3)+' Gbit/s')+', queue '+
v.queue+' B'+(v.paused?', sender paused':'')+(v.drops?', '+v.drops+' drops':'')+(v.up?'':', DOWN');
document.getElementById(pfx+'-p'+i).setAttribute('visibility',v.paused?'visible':'hidden');
document.getElementById(pfx+'-d'+i).setAttribute('visibility',v.drops?'visible':'hidden');}
"""

LEGEND_W = 240  # px of the colour bar


def _legend_html(stops, pic):
    """An idle swatch, the colour bar with its ticks at their places on the scale, the marks."""
    grad = ",".join("rgb(%d,%d,%d)" % tuple(c) for c in stops)
    ticks = "".join(f'<span style="position:absolute;left:{LEGEND_W * float(pic.scale(t)):.0f}px;'
                    f'transform:translateX(-50%)">{100 * t:g}%</span>' for t in pic.SCALE_TICKS)
    return ('<div class="legend" id="rl-legend">utilisation: '
            f'<span style="display:inline-block;width:22px;height:10px;background:{pic.IDLE_COLOR};'
            'vertical-align:middle"></span> idle (sent nothing) &nbsp; '
            f'<span style="display:inline-block;position:relative;width:{LEGEND_W}px;height:24px;margin:0 16px 0 4px;'
            'vertical-align:top"><span style="display:block;height:10px;'
            f'background:linear-gradient(90deg,{grad})"></span>'
            f'<span style="display:block;position:relative;font-size:10px">{ticks}</span></span>'
            ' (square-root scale)' + LEGEND_REST)


LEGEND_REST = """ &nbsp; <span style="color:#ff7f0e">&#9670;</span> sender paused (PFC)
&nbsp; <span style="color:#d62728">&#10006;</span> drops &nbsp; dashed grey: link down</div>"""


def _xy(scene):
    tiers = sorted({n.y for n in scene.nodes})
    widest = max(sum(1 for n in scene.nodes if n.tier == t) for t in TIERS)
    width = max(520, NODE_GAP * widest)
    top = max(tiers)
    return {n.id: (MARGIN + n.x * width, MARGIN / 2 + (top - n.y) * TIER_GAP) for n in scene.nodes}, \
        width + MARGIN + 20, top * TIER_GAP + MARGIN + 40


def scene_svg(scene, pfx):
    """The SVG text of a Scene, lines grey until painted."""
    pos, w, h = _xy(scene)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="fabric" id="{pfx}" '
           f'viewBox="0 0 {w:.0f} {h:.0f}" width="{w:.0f}" height="{h:.0f}" font-size="10" '
           f'font-family="sans-serif">']
    for y in sorted({n.y for n in scene.nodes}):
        ty = MARGIN / 2 + (max(n.y for n in scene.nodes) - y) * TIER_GAP
        out.append(f'<text x="2" y="{ty - 14:.0f}" fill="#555">{TIER_LABEL[TIERS[int(y)]]}</text>')
    for i, ln in enumerate(scene.lines):
        (x0, y0), (x1, y1) = pos[ln.src], pos[ln.dst]
        d = -OFFSET if (y1 < y0 or (y1 == y0 and x1 > x0)) else OFFSET
        x0, x1 = x0 + d, x1 + d
        mx, my = x0 + MARK_AT * (x1 - x0), y0 + MARK_AT * (y1 - y0)
        key = escape(ln.key)
        out.append(f'<line class="ln" id="{pfx}-l{i}" data-link="{key}" data-members='
                   f'"{len(ln.members)}" x1="{x0:.1f}" y1="{y0:.1f}" x2="{x1:.1f}" y2="{y1:.1f}" '
                   f'stroke="#ccc" stroke-width="2.5"><title>{key}</title></line>')
        out.append(f'<rect class="pm" id="{pfx}-p{i}" x="{mx - 4:.1f}" y="{my - 4:.1f}" '
                   f'width="8" height="8" fill="#ff7f0e" stroke="#000" stroke-width="0.5" '
                   f'transform="rotate(45 {mx:.1f} {my:.1f})" visibility="hidden"/>')
        out.append(f'<text class="dm" id="{pfx}-d{i}" x="{mx:.1f}" y="{my + 4:.1f}" '
                   f'text-anchor="middle" font-size="13" fill="#d62728" '
                   f'visibility="hidden">&#10006;</text>')
    for n in scene.nodes:
        x, y = pos[n.id]
        shape = (f'<rect x="{x - 6:.1f}" y="{y - 6:.1f}" width="12" height="12"' if n.tier == "host"
                 else f'<circle cx="{x:.1f}" cy="{y:.1f}" r="7"')
        ly = y + 18 if n.tier == "host" else y - 11
        out.append(f'<g class="node" data-node="{escape(n.id)}" data-tier="{n.tier}" '
                   f'data-members="{escape(" ".join(n.members))}">{shape} fill="{NODE_FILL[n.tier]}" '
                   f'stroke="#000"/><text x="{x:.1f}" y="{ly:.1f}" text-anchor="middle">'
                   f'{escape(n.label)}</text></g>')
    out.append("</svg>")
    return "\n".join(out)
