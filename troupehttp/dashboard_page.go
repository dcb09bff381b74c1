package troupehttp

import (
	"bytes"
	"html/template"
	"net/http"
	"strconv"
)

// servePage renders the page: the registered stacks' names (escaped by
// html/template) for a first look, and the script that replaces them with
// the live view from /events.
func (d *Dashboard) servePage(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	names := make([]string, len(d.stacks))
	for i, s := range d.stacks {
		names[i] = s.name
	}
	d.mu.Unlock()
	var b bytes.Buffer
	if err := dashPage.Execute(&b, names); err != nil {
		http.Error(w, "troupehttp: Dashboard: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", dashCSP)
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(b.Bytes())
}

// dashCSP lets the page load nothing but itself: its inline style and
// script, and its event stream.
const dashCSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

var dashPage = template.Must(template.New("dashboard").Parse(dashPageHTML))

// dashPageHTML is the page, HTML, CSS and script together. The script
// builds every text with textContent, never markup from data.
const dashPageHTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>troupe dashboard</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1rem 1.5rem;background:#f6f7f9;color:#1d2330}
h1{font-size:1.3rem;margin:0 0 .3rem}
h2{font-size:1.1rem;margin:1.2rem 0 .5rem}
#status{font-size:.85rem;color:#666}
#status.live{color:#1a7f37}
.stages{display:flex;flex-wrap:wrap;gap:.8rem}
.stage{background:#fff;border:1px solid #d8dce3;border-radius:6px;padding:.6rem .8rem;width:15.5rem}
.stage h3{font-size:1rem;margin:0 0 .3rem;overflow-wrap:anywhere}
.stage dl{display:grid;grid-template-columns:auto 1fr;gap:0 .6rem;margin:0}
.stage dt{color:#666}.stage dd{margin:0;text-align:right;font-variant-numeric:tabular-nums}
.stage canvas{width:100%;height:48px;margin-top:.4rem;display:block}
.state-open{color:#c62828;font-weight:bold}.state-half-open{color:#b26a00;font-weight:bold}
.state-closed{color:#1a7f37}.legend{font-size:.75rem;color:#666}
.ep-ready{color:#1a7f37}.ep-busy{color:#b26a00}.ep-paused,.ep-failing{color:#c62828;font-weight:bold}
</style></head><body>
<h1>troupe dashboard</h1>
<div id="status">connecting…</div>
<div id="stacks">{{range .}}<h2 class="pending">{{.}}</h2>{{end}}</div>
<script>
"use strict";
const root = document.getElementById("stacks");
const status = document.getElementById("status");
const stacks = new Map();
const fields = [
  ["inFlight", "in flight", s => s.unbounded ? String(s.inFlight) : s.inFlight + " / " + s.capacity],
  ["queued", "queued", s => String(s.queued)],
  ["waiting", "waiting", s => String(s.waiting)],
  ["accepted", "accepted/s", s => num(s.accepted)],
  ["rejected", "rejected/s", s => num(s.rejected)],
  ["failed", "failed/s", s => num(s.failed)],
  ["retries", "retries/s", s => num(s.retries)],
  ["hedges", "hedges/s", s => num(s.hedges)],
  ["p50", "p50 ms", s => num(s.p50)],
  ["p99", "p99 ms", s => num(s.p99)],
  ["breaker", "breaker", s => s.breaker || null],
  ["limit", "limit", s => s.limit == null ? null : String(s.limit)],
  ["rateLimit", "rate limit", s => s.rateLimit || null],
  ["endpoint", "endpoint", s => s.endpoint || null],
  ["picks", "picks/s", s => s.endpoint ? num(s.picks) : null],
  ["errors", "errors/s", s => s.endpoint ? num(s.errors) : null],
  ["rttMs", "rtt ms", s => s.rttMs == null ? null : num(s.rttMs)],
];
const endpointFields = new Set(["inFlight", "endpoint", "picks", "errors", "rttMs"]); // a balancer's endpoint shows these
function num(v) {
  if (v == null) return "–";
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
}
function el(tag, cls) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  return e;
}
function stackView(name) {
  let v = stacks.get(name);
  if (v) return v;
  const sec = el("section", "stack");
  sec.dataset.stack = name;
  const h = el("h2");
  h.textContent = name;
  const box = el("div", "stages");
  sec.append(h, box);
  root.append(sec);
  v = {sec, box, stages: new Map()};
  stacks.set(name, v);
  return v;
}
function stageView(sv, name) {
  let v = sv.stages.get(name);
  if (v) return v;
  const card = el("div", "stage");
  card.dataset.stage = name;
  const h = el("h3");
  h.textContent = name;
  const dl = el("dl");
  const cells = {};
  for (const [key, label] of fields) {
    const dt = el("dt"), dd = el("dd");
    dt.textContent = label;
    dd.dataset.field = key;
    dl.append(dt, dd);
    cells[key] = [dt, dd];
  }
  const canvas = el("canvas");
  const legend = el("div", "legend");
  legend.textContent = "blue: in flight · orange: accepted/s";
  card.append(h, dl, canvas, legend);
  sv.box.append(card);
  v = {card, cells, canvas, legend};
  sv.stages.set(name, v);
  return v;
}
function plot(canvas, a, b) {
  const w = canvas.clientWidth, h = canvas.clientHeight, r = window.devicePixelRatio || 1;
  canvas.width = w * r; canvas.height = h * r;
  const g = canvas.getContext("2d");
  g.scale(r, r);
  g.fillStyle = "#f0f2f5"; g.fillRect(0, 0, w, h);
  for (const [data, color] of [[a, "#1f6feb"], [b, "#e8590c"]]) {
    if (!data || data.length < 2) continue;
    const top = Math.max(1, ...data);
    g.strokeStyle = color; g.lineWidth = 1.5; g.beginPath();
    data.forEach((y, i) => {
      const px = i * w / (data.length - 1), py = h - 2 - y / top * (h - 4);
      i ? g.lineTo(px, py) : g.moveTo(px, py);
    });
    g.stroke();
  }
}
function render(frame) {
  for (const p of root.querySelectorAll(".pending")) p.remove();
  for (const st of frame.stacks) {
    const sv = stackView(st.name);
    for (const s of st.stages || []) {
      const v = stageView(sv, s.name);
      for (const [key, , show] of fields) {
        const text = show(s), [dt, dd] = v.cells[key];
        const hide = text == null || (s.endpoint && !endpointFields.has(key));
        dt.hidden = hide; dd.hidden = hide;
        dd.textContent = hide ? "" : text;
        if (key === "breaker") dd.className = hide ? "" : "state-" + s.breaker;
        if (key === "endpoint") dd.className = hide ? "" : "ep-" + s.endpoint;
      }
      v.legend.textContent = "blue: in flight · orange: " + (s.endpoint && s.accepted == null ? "picks/s" : "accepted/s");
      plot(v.canvas, s.seriesInFlight, s.seriesAccepted);
    }
    const names = new Set((st.stages || []).map(s => s.name));
    for (const [name, v] of sv.stages) {
      if (!names.has(name)) { v.card.remove(); sv.stages.delete(name); } // a balancer's endpoint removed
    }
  }
}
const es = new EventSource("events");
es.onopen = () => { status.textContent = "live"; status.className = "live"; };
es.onerror = () => { status.textContent = "disconnected, retrying…"; status.className = ""; };
let frames = 0;
es.onmessage = e => { render(JSON.parse(e.data)); document.body.dataset.frames = ++frames; status.textContent = "live · " + new Date().toLocaleTimeString(); status.className = "live"; };
</script>
</body></html>
`
