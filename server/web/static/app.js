// wpg serve's web UI: the few behaviours a page needs beyond htmx. No inline scripts (the pages'
// Content-Security-Policy forbids them): each page's data comes inlined as <script type="application/json">.
"use strict";
(function () {
  const wpg = (window.wpg = { charts: {}, live: 0 });
  const page = document.body.dataset.page;
  const data = (id) => { const el = document.getElementById(id); return el ? JSON.parse(el.textContent) : null; };
  const colors = ["#1f6feb", "#cf222e", "#1a7f37", "#9a6700", "#8250df", "#bf3989", "#0a7ea4", "#57606a"];

  // scaled writes v with three significant digits in the largest unit of
  // us (largest first, [factor, suffix]) it reaches; a value that rounds
  // up to 1000 of a unit takes the next one (999.96 is "1.00 k", not
  // "1.00e+3").
  const scaled = (v, us) => {
    const a = Math.abs(v);
    let i = us.findIndex(([f]) => a >= f);
    if (i < 0) i = us.length - 1;
    if (i > 0 && Math.abs(Number((v / us[i][0]).toPrecision(3))) >= 1000) i--;
    return (v / us[i][0]).toPrecision(3) + us[i][1];
  };
  const si = (v, unit) => {
    if (v == null || isNaN(v)) return "–";
    return scaled(v, [[1e12, " T"], [1e9, " G"], [1e6, " M"], [1e3, " k"], [1, " "]]) + unit;
  };
  const count = (n) => Number(n).toLocaleString("en-US");
  // left writes seconds left as the server does ("1m5s", "9s").
  const left = (secs) => {
    const t = Math.ceil(Math.max(secs, 0)), h = Math.floor(t / 3600), m = Math.floor((t % 3600) / 60), s = t % 60;
    return (h ? h + "h" + m + "m" : m ? m + "m" : "") + s + "s";
  };
  // row is a table row of [text, class] cells.
  const row = (cells) => {
    const tr = document.createElement("tr");
    for (const [v, cls] of cells) {
      const td = document.createElement("td");
      td.textContent = v;
      if (cls) td.className = cls;
      tr.appendChild(td);
    }
    return tr;
  };
  const dur = (ns) => (ns < 1e3 ? ns + " ns" : scaled(ns, [[1e9, " s"], [1e6, " ms"], [1e3, " µs"]]));

  // chart draws series against seconds into the element id: each a label,
  // or {label, dash, color} (a dashed line: a target). The legend below
  // it shows each series' value under the cursor; a click on a name hides
  // or shows its line (uPlot's legend).
  function chart(id, series, unit, x, ys) {
    const el = document.getElementById(id);
    if (!el || !window.uPlot) return null;
    let c = 0;
    const opts = {
      width: Math.max(el.clientWidth - 2, 280), height: 220,
      scales: { x: { time: false }, y: { range: (u, lo, hi) => [0, hi > 0 ? hi * 1.1 : 1] } },
      axes: [{ label: "seconds" }, { label: unit, size: 70, values: (u, vals) => vals.map((v) => si(v, "")) }],
      series: [{ label: "s" }].concat(series.map((sr) => {
        const o = typeof sr === "string" ? { label: sr } : sr;
        return {
          label: o.label, stroke: o.color || colors[c++ % colors.length], width: o.dash ? 1.5 : 2, dash: o.dash, spanGaps: !!o.dash,
          value: (u, v) => (v == null ? "–" : si(v, unit)),
        };
      })),
    };
    const u = new uPlot(opts, [x].concat(ys), el);
    wpg.charts[id] = u;
    return u;
  }
  window.addEventListener("resize", () => {
    for (const id in wpg.charts) {
      const el = document.getElementById(id);
      if (el) wpg.charts[id].setSize({ width: Math.max(el.clientWidth - 2, 280), height: 220 });
    }
  });

  if (page === "new") {
    const examples = data("examples") || [];
    const ta = document.getElementById("template_text");
    const pick = document.getElementById("example");
    pick && pick.addEventListener("change", () => {
      const e = examples[Number(pick.value)];
      if (!e || pick.value === "") return;
      ta.value = e.text;
      window.htmx && htmx.trigger(ta, "wpg-example");
    });
    const sel = document.getElementById("backend");
    const show = () => document.querySelectorAll("fieldset.backend").forEach((fs) => {
      fs.hidden = fs.dataset.backend !== sel.value;
    });
    sel && (sel.addEventListener("change", show), show());
  }

  if (page === "job") {
    const d = data("chart-data");
    if (!d) return;
    const x = [], pps = [], bps = [], p50 = [], p99 = [], tgt = [];
    // One line per template stream (its frames/s over each window).
    const names = d.streams || [];
    const st = names.map(() => []);
    let target = d.target_pps || 0;
    for (const s of d.samples) {
      x.push(s.t); pps.push(s.pps); bps.push(s.bps); tgt.push(target || null);
      p50.push(s.lateness_p50_ns ? s.lateness_p50_ns / 1e3 : null);
      p99.push(s.lateness_p99_ns ? s.lateness_p99_ns / 1e3 : null);
      st.forEach((a, i) => a.push(s.streams && s.streams[i] ? s.streams[i].pps : null));
    }
    const ppsSeries = ["frames/s"].concat(target ? [{ label: "target", dash: [6, 4], color: "#bc4c00" }] : []);
    const ppsData = () => (target ? [x, pps, tgt] : [x, pps]);
    const cp = chart("chart-pps", ppsSeries, "pps", x, ppsData().slice(1));
    const cs = names.length ? chart("chart-streams", names, "pps", x, st) : null;
    const cb = chart("chart-bps", ["bits/s (" + (d.bps_layer || "l2").toUpperCase() + ")"], "bit/s", x, [bps]);
    const cl = chart("chart-late", ["p50", "p99"], "µs", x, [p50, p99]);
    // The receiver's loss and latency: a section shown once a sample or
    // a snapshot carries them (jobs with a receiver of their own).
    const rx = { x: [], lost: [], lat: [], cl: null, ct: null };
    const rxShow = () => {
      if (rx.cl) return;
      const sec = document.getElementById("receiver");
      if (!sec) return;
      sec.hidden = false;
      rx.cl = chart("chart-loss", ["lost"], "frames", rx.x, [rx.lost]);
      rx.ct = chart("chart-latency", ["latency p99"], "µs", rx.x, [rx.lat]);
    };
    const rxDraw = () => { rx.cl && rx.cl.setData([rx.x, rx.lost]); rx.ct && rx.ct.setData([rx.x, rx.lat]); };
    for (const s of d.samples) {
      if (s.lost == null) continue;
      rx.x.push(s.t); rx.lost.push(s.lost); rx.lat.push(s.latency_p99_ns ? s.latency_p99_ns / 1e3 : null);
    }
    if (rx.x.length) rxShow();
    if (!d.running || !d.events) return;
    let prev = null;
    const es = new EventSource(d.events);
    wpg.source = es;
    es.addEventListener("snapshot", (ev) => {
      const s = JSON.parse(ev.data);
      const t = s.elapsed_seconds;
      if (prev && t > prev.elapsed_seconds) {
        const dt = t - prev.elapsed_seconds;
        x.push(t);
        pps.push((s.frames - prev.frames) / dt);
        bps.push(((s.bytes - prev.bytes + (s.frames - prev.frames) * (d.frame_overhead || 0)) * 8) / dt);
        const lw = s.lateness_window || {};
        p50.push(lw.count ? lw.p50_ns / 1e3 : null);
        p99.push(lw.count ? lw.p99_ns / 1e3 : null);
        tgt.push(target || null);
        // The streams' counts lag frames by up to 50 ms: each stream's rate
        // is the window's frame rate split by its share of the frames the
        // streams counted in it (their own over a short window, the job's
        // last, would spike).
        const sd = st.map((_, i) => {
          const now = s.streams && s.streams[i], was = prev.streams && prev.streams[i];
          return now && was && now.frames >= was.frames ? now.frames - was.frames : null;
        });
        const sall = sd.reduce((n, v) => n + (v || 0), 0);
        st.forEach((a, i) => a.push(sd[i] == null ? null : sall > 0 ? ((s.frames - prev.frames) / dt) * (sd[i] / sall) : 0));
        if (x.length > 4000) [x, pps, bps, p50, p99, tgt, ...st].forEach((a) => a.shift());
        cp && cp.setData(ppsData()); cb && cb.setData([x, bps]); cl && cl.setData([x, p50, p99]);
        cs && cs.setData([x, ...st]);
        const r = s.receiver;
        if (r) {
          const lw = r.latency_window || {};
          rx.x.push(t); rx.lost.push(r.lost); rx.lat.push(lw.count ? lw.p99_ns / 1e3 : null);
          if (rx.x.length > 4000) [rx.x, rx.lost, rx.lat].forEach((a) => a.shift());
          rxShow(); rxDraw();
          wpg.rx = (wpg.rx || 0) + 1;
        }
        wpg.live++;
      }
      if (s.receiver) {
        const rc = document.getElementById("rx-counts");
        const r = s.receiver;
        if (rc) rc.textContent = count(r.frames) + " frames, " + count(r.lost) + " lost, " + count(r.duplicated) + " duplicated, " + count(r.corrupted) + " corrupted" +
          (r.latency && r.latency.count ? ", latency p50 " + dur(r.latency.p50_ns) + " p99 " + dur(r.latency.p99_ns) : "");
      }
      if (!prev || t > prev.elapsed_seconds) prev = s;
      const f = document.getElementById("job-frames");
      if (f) f.textContent = count(s.frames);
      const r = document.getElementById("job-rate");
      if (r) r.textContent = si(s.pps, "pps") + " · " + si(s.bps, "bit/s") + (target ? " (target " + si(target, "pps") + ")" : "");
      // Progress towards the count or the duration, and the time left.
      const pg = document.getElementById("job-progress"), pt = document.getElementById("job-progress-text");
      if (s.progress && pg && pt) {
        const pc = Math.floor(s.progress.fraction * 100);
        pg.value = pc;
        pg.textContent = pc + " %";
        pt.textContent = pc + " % of the " + s.progress.by + (s.progress.remaining_seconds != null ? " · " + left(s.progress.remaining_seconds) + " left" : "");
        wpg.progress = s.progress.fraction;
      }
      const sb = document.querySelector("#streams tbody");
      if (sb && s.streams) {
        const all = s.streams.reduce((n, x) => n + x.frames, 0);
        sb.replaceChildren(...s.streams.map((x) => row([[x.name, "name"], [count(x.frames), "num"], ["–", "num opt"], [si(x.pps, "pps"), "num"], ["–", "num opt"],
          [(all ? (100 * x.frames) / all : 0).toFixed(1) + " %", "num"]])));
      }
      const tb = document.querySelector("#workers tbody");
      if (tb && s.workers) {
        tb.replaceChildren(...s.workers.map((w) => row([[w.worker, ""], [count(w.frames), "num"], [si(w.bytes, "B"), "num"], [si(w.pps, "pps"), "num"]])));
      }
    });
    es.addEventListener("report", () => {
      es.close();
      window.location.reload();
    });
  }

  if (page === "compare") {
    const jobs = data("compare-data") || [];
    const ts = [...new Set(jobs.flatMap((j) => j.samples.map((s) => s.t)))].sort((a, b) => a - b);
    const col = (f) => jobs.map((j) => {
      const m = new Map(j.samples.map((s) => [s.t, f(s)]));
      return ts.map((t) => (m.has(t) ? m.get(t) : null));
    });
    const names = jobs.map((j) => j.id + " " + (j.name || ""));
    chart("chart-cmp-pps", names, "pps", ts, col((s) => s.pps));
    chart("chart-cmp-late", names, "µs", ts, col((s) => (s.lateness_p99_ns ? s.lateness_p99_ns / 1e3 : null)));
    const lat = document.getElementById("cmp-latency");
    if (lat && !lat.hidden) chart("chart-cmp-latency", names, "µs", ts, col((s) => (s.latency_p99_ns ? s.latency_p99_ns / 1e3 : null)));
  }
})();
