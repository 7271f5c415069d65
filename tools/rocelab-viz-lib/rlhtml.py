# SPDX-License-Identifier: BSD-3-Clause
"""One self-contained HTML file with a time slider over one or more runs (side
by side, one slider): inline SVG, inline script, nothing fetched.

Per drawn direction and sample it carries: utilisation (of the busiest member
when the line aggregates several, as the PNG colours it),
queue bytes (largest member), paused (any member's sender paused at the
sample), new drops in the interval (summed). A run shorter than the others ends
before the slider does: from then on its panel says so and its links are idle
(a run that is over sends nothing), where it used to stay on its last sample.
"""

import json
from html import escape

from rlsvg import color_js, scene_svg

UTIL_ROUND = 3


def series(scene, run):
    """{"t": [ms since the run's start...], "lines": [[util...], [queue...], [paused...], [drops...]] per line}"""
    by_key = {c.key: c for c in run.chans}
    lines = []
    for ln in scene.lines:
        ms = [by_key[m] for m in ln.members]
        util = [round(max(c.util[i] for c in ms), UTIL_ROUND) for i in range(len(run.times))]
        queue = [max(c.queue[i] for c in ms) for i in range(len(run.times))]
        paused = [int(any(c.paused[i] for c in ms)) for i in range(len(run.times))]
        total = [sum(c.drops[i] for c in ms) for i in range(len(run.times))]
        drops = [total[0]] + [b - a for a, b in zip(total, total[1:])]
        up = [int(all(c.up[i] for c in ms)) for i in range(len(run.times))]
        lines.append([util, queue, paused, drops, up])
    return {"t": [run.rel_ms(i) for i in range(len(run.times))], "lines": lines}


SCRIPT = """
const RUNS=JSON.parse(document.getElementById('rl-data').textContent);
const slider=document.getElementById('rl-t'),play=document.getElementById('rl-play');
function show(k){RUNS.forEach((r,p)=>{const i=Math.min(k,r.t.length-1),over=k>=r.t.length;
document.getElementById('rl-time'+p).textContent=over?'run ended at '+r.t[i].toFixed(3)+' ms':'t = '+r.t[i].toFixed(3)+' ms';
r.lines.forEach((s,j)=>rlPaint('p'+p,j,over?{util:0,queue:0,paused:0,drops:0,up:s[4][i]}:
{util:s[0][i],queue:s[1][i],paused:s[2][i],drops:s[3][i],up:s[4][i]}));});
slider.value=k;document.body.dataset.sample=k;}
slider.max=Math.max(...RUNS.map(r=>r.t.length))-1;
slider.addEventListener('input',()=>show(+slider.value));
let timer=null;play.addEventListener('click',()=>{if(timer){clearInterval(timer);timer=null;play.textContent='play';return;}
play.textContent='pause';timer=setInterval(()=>{let k=+slider.value+1;if(k>+slider.max)k=0;show(k);},120);});
const rlStart=/^#sample=(\d+)$/.exec(location.hash);show(rlStart?Math.min(+rlStart[1],+slider.max):0);
"""


def page(title, panels):
    """The HTML text. panels: [(subtitle, scene, run)]."""
    data = [series(scene, run) for _, scene, run in panels]
    body = []
    for p, (sub, scene, run) in enumerate(panels):
        body.append(f'<div class="panel"><h3>{escape(sub)} <span id="rl-time{p}"></span></h3>'
                    f'{scene_svg(scene, f"p{p}")}</div>')
    js, legend = color_js()
    blob = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{escape(title)}</title>
<link rel="icon" href="data:,">
<style>body{{font-family:sans-serif;margin:12px}} .panel{{display:inline-block;vertical-align:top;
margin-right:18px}} h3{{font-size:14px;margin:4px 0}} #rl-t{{width:60%}} .legend{{font-size:12px;margin:6px 0}}</style>
</head><body>
<h2 style="font-size:16px">{escape(title)}</h2>
<div><button id="rl-play">play</button> <input type="range" id="rl-t" min="0" max="0" value="0">
(slide through the samples; hover a link for its numbers; #sample=K in the address opens sample K)</div>
{legend}
{"".join(body)}
<script type="application/json" id="rl-data">{blob}</script>
<script>{js}{SCRIPT}</script>
</body></html>
"""
