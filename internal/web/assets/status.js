// queue-checker status page: refreshes the numbers, lists and charts from
// /api/v1/groups every few seconds without reloading the page. The server
// renders the same page from the same JSON (fields.go, charts.go); the
// formatting and chart arithmetic below mirror it step for step, so a number
// reads the same before and after a refresh.
(function () {
  "use strict";

  var cfgEl = document.getElementById("checker-config");
  if (!cfgEl) { return; }
  var cfg = JSON.parse(cfgEl.textContent);

  // ---- Decimal rounding as Go's strconv does it: exact value, ties to even.

  // decimalOf returns the decimal digits of |x| (no leading zeros) and the
  // position of the decimal point relative to them, from 40 significant
  // digits of its exact binary value.
  function decimalOf(x) {
    var s = Math.abs(x).toPrecision(40);
    var exp = 0;
    var e = s.indexOf("e");
    if (e >= 0) { exp = parseInt(s.slice(e + 1), 10); s = s.slice(0, e); }
    var dot = s.indexOf(".");
    var intLen = dot >= 0 ? dot : s.length;
    var digits = s.replace(".", "");
    var lead = 0;
    while (lead < digits.length - 1 && digits.charAt(lead) === "0") { lead++; }
    digits = digits.slice(lead);
    var trail = digits.length;
    while (trail > 1 && digits.charAt(trail - 1) === "0") { trail--; }
    return { d: digits.slice(0, trail), dp: intLen + exp - lead };
  }

  // roundDigits rounds a decimal to nd digits, ties to even.
  function roundDigits(dec, nd) {
    var d = dec.d, dp = dec.dp;
    if (d === "0") { return { d: "0", dp: 1 }; }
    if (nd < 0 || nd >= d.length) { return dec; }
    var up;
    var next = d.charAt(nd);
    if (next === "5" && nd + 1 === d.length) {
      up = nd > 0 && (d.charCodeAt(nd - 1) - 48) % 2 === 1;
    } else {
      up = next >= "5";
    }
    var kept = d.slice(0, nd);
    if (up) {
      var i = kept.length - 1;
      var arr = kept.split("");
      while (i >= 0 && arr[i] === "9") { arr[i] = "0"; i--; }
      if (i < 0) { arr.unshift("1"); dp++; } else { arr[i] = String.fromCharCode(arr[i].charCodeAt(0) + 1); }
      kept = arr.join("");
    }
    kept = kept.replace(/0+$/, "");
    if (kept === "") { return { d: "0", dp: 1 }; }
    return { d: kept, dp: dp };
  }

  // fixed is strconv.FormatFloat(x, 'f', prec, 64).
  function fixed(x, prec) {
    var r = roundDigits(decimalOf(x), decimalOf(x).dp + prec);
    var neg = x < 0 || (x === 0 && 1 / x < 0);
    var s = "";
    if (r.d === "0") {
      s = "0";
      if (prec > 0) { s += "." + "0".repeat(prec); }
      return (neg ? "-" : "") + s;
    }
    var i;
    if (r.dp > 0) {
      for (i = 0; i < r.dp; i++) { s += i < r.d.length ? r.d.charAt(i) : "0"; }
    } else {
      s = "0";
    }
    if (prec > 0) {
      s += ".";
      for (i = 0; i < prec; i++) {
        var j = r.dp + i;
        s += j >= 0 && j < r.d.length ? r.d.charAt(j) : "0";
      }
    }
    return (neg ? "-" : "") + s;
  }

  // general is strconv.FormatFloat(x, 'g', prec, 64).
  function general(x, prec) {
    if (x === 0) { return "0"; }
    var r = roundDigits(decimalOf(x), prec);
    var neg = x < 0 ? "-" : "";
    var exp = r.dp - 1;
    var eprec = prec;
    if (eprec > r.d.length && r.d.length >= r.dp) { eprec = r.d.length; }
    if (exp < -4 || exp >= eprec) {
      var m = r.d.charAt(0);
      if (r.d.length > 1) { m += "." + r.d.slice(1); }
      var ae = Math.abs(exp);
      return neg + m + "e" + (exp < 0 ? "-" : "+") + (ae < 10 ? "0" : "") + ae;
    }
    if (r.dp <= 0) {
      return neg + "0." + "0".repeat(-r.dp) + r.d;
    }
    if (r.dp >= r.d.length) {
      return neg + r.d + "0".repeat(r.dp - r.d.length);
    }
    return neg + r.d.slice(0, r.dp) + "." + r.d.slice(r.dp);
  }

  function trimZeros(s) {
    if (s.indexOf(".") < 0) { return s; }
    s = s.replace(/0+$/, "");
    return s.replace(/\.$/, "");
  }

  // ---- The formats of format.go.

  function formatNumber(x) {
    var ax = Math.abs(x);
    if (isNaN(x)) { return "NaN"; }
    if (x === Infinity) { return "∞"; }
    if (x === -Infinity) { return "-∞"; }
    if (x === 0) { return "0"; }
    if (ax < 1) { return general(x, 3); }
    if (ax >= 1e15) { return general(x, 4); }
    var decimals = 0;
    if (ax < 100) { decimals = 2; } else if (ax < 10000) { decimals = 1; }
    var s = trimZeros(fixed(x, decimals));
    var sign = "";
    if (s.charAt(0) === "-") { sign = "-"; s = s.slice(1); }
    var parts = s.split(".");
    var whole = parts[0], out = "";
    for (var i = 0; i < whole.length; i++) {
      if (i > 0 && (whole.length - i) % 3 === 0) { out += ","; }
      out += whole.charAt(i);
    }
    return sign + out + (parts.length > 1 ? "." + parts[1] : "");
  }

  function formatSeconds(s) {
    if (isNaN(s) || !isFinite(s)) { return "never"; }
    if (s < 0) { return "-" + formatSeconds(-s); }
    if (s === 0) { return "0 s"; }
    if (s < 1) {
      var ms = s * 1000;
      if (ms >= 0.1) { return fixed(ms, 1) + " ms"; }
      return general(ms, 2) + " ms";
    }
    if (s < 59.95) { return trimZeros(fixed(s, 1)) + " s"; }
    if (s >= 1000 * 86400) { return formatNumber(s / 86400) + " days"; }
    var total = Math.round(s);
    if (total >= 86400) { total = Math.floor((total + 30) / 60) * 60; }
    var out = "";
    var units = [["d", 86400], ["h", 3600], ["m", 60], ["s", 1]];
    for (var i = 0; i < units.length; i++) {
      var n = Math.floor(total / units[i][1]);
      if (n > 0) { out += n + units[i][0]; total -= n * units[i][1]; }
    }
    return out;
  }

  function formatPercent(ratio) { return fixed(100 * ratio, 1) + " %"; }

  function pad2(n) { return (n < 10 ? "0" : "") + n; }

  // parseMs reads an RFC 3339 time to the millisecond, truncating, as Go's
  // UnixMilli does.
  function parseMs(iso) {
    var m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(iso);
    if (!m) { return NaN; }
    var base = Date.parse(m[1] + m[3]);
    var frac = ((m[2] || "") + "000").slice(0, 3);
    return base + parseInt(frac, 10);
  }

  function clockOf(ms) {
    var d = new Date(ms);
    return pad2(d.getUTCHours()) + ":" + pad2(d.getUTCMinutes()) + ":" + pad2(d.getUTCSeconds());
  }

  function minuteClock(ms) {
    var d = new Date(ms);
    return pad2(d.getUTCHours()) + ":" + pad2(d.getUTCMinutes());
  }

  function isoOf(ms) { return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z"); }

  // ---- Fields, as fields.go writes them.

  function lookup(v, path) {
    var keys = path.split(".");
    for (var i = 0; i < keys.length; i++) {
      if (v === null || typeof v !== "object" || Array.isArray(v)) { return null; }
      v = Object.prototype.hasOwnProperty.call(v, keys[i]) ? v[keys[i]] : null;
    }
    return v === undefined ? null : v;
  }

  function diagnosisOf(state) {
    if (Object.prototype.hasOwnProperty.call(cfg.diagnoses, state)) { return cfg.diagnoses[state]; }
    return { label: state, level: "info", means: "A state this page does not know: " + state + ".", advice: "See the reasons below." };
  }

  function actionText(a) {
    function num(k) { return typeof a[k] === "number" ? a[k] : 0; }
    var parts = [];
    if (a.scaled === true) {
      parts.push("desired set " + formatNumber(num("from")) + " → " + formatNumber(num("to")));
    } else {
      parts.push("desired count not changed");
    }
    if (num("metrics_published") > 0) { parts.push(formatNumber(num("metrics_published")) + " metrics published"); }
    if (a.dry_run === true) { parts.push("dry run: nothing changed in AWS"); }
    return parts.join("; ");
  }

  function formatField(g, path, f, nullText) {
    if (!nullText) { nullText = "unknown"; }
    var v = lookup(g, path);
    if (f === "drain" && v === null) {
      if (lookup(g, "decision") !== null && lookup(g, "decision.arrival_rate") !== null) { return "never"; }
      return nullText;
    }
    if (v === null) { return nullText; }
    var isNum = typeof v === "number";
    switch (f) {
      case "count": if (isNum) { return formatNumber(goRound(v)); } break;
      case "number": if (isNum) { return formatNumber(v); } break;
      case "rate": if (isNum) { return formatNumber(v) + " msg/s"; } break;
      case "seconds": case "drain": if (isNum) { return formatSeconds(v); } break;
      case "promise": if (isNum) { return v === 0 ? "none" : formatSeconds(v); } break;
      case "percent": if (isNum) { return formatPercent(v); } break;
      case "cap": if (isNum) { return v === 0 ? "none" : formatNumber(goRound(v)); } break;
      case "ago": if (isNum) { return formatSeconds(goRound(v)) + " ago"; } break;
      case "clock": if (typeof v === "string") { var ms = parseMs(v); if (!isNaN(ms)) { return clockOf(ms); } } break;
      case "diagnosis": if (typeof v === "string") { return diagnosisOf(v).label; } break;
      case "action": if (typeof v === "object" && !Array.isArray(v)) { return actionText(v); } break;
      case "text": if (typeof v === "string") { return v === "" ? nullText : v; } break;
    }
    return nullText;
  }

  // goRound is math.Round: halves away from zero.
  function goRound(x) { return x < 0 ? -Math.round(-x) : Math.round(x); }

  function truthy(v) {
    if (typeof v === "boolean") { return v; }
    if (typeof v === "string") { return v !== ""; }
    if (typeof v === "number") { return v !== 0; }
    return false;
  }

  // ---- Charts, as charts.go draws them.

  var geo = cfg.geometry;
  var plotW = geo.width - geo.left - geo.right;
  var plotH = geo.height - geo.top - geo.bottom;

  function niceMax(x) {
    if (!(x > 1) || !isFinite(x)) { return 1; }
    var p = 1;
    while (p * 10 <= x) { p *= 10; }
    var ms = [1, 2, 2.5, 5, 10];
    for (var i = 0; i < ms.length; i++) { if (ms[i] * p >= x) { return ms[i] * p; } }
    return 10 * p;
  }

  function coord(x) { return String(Math.round(x * 10) / 10); }

  function pick(samples, startMs, windowMs, step) {
    var out = [], last = -1;
    for (var i = 0; i < samples.length; i++) {
      var s = samples[i];
      if (s.ms < startMs || s.ms > startMs + windowMs) { continue; }
      var b = Math.floor((s.ms - startMs) * plotW / windowMs);
      if (b !== last) { out.push(s); last = b; continue; }
      var cur = out[out.length - 1];
      if (s.nil) { continue; }
      if (cur.nil || step || s.v > cur.v) { out[out.length - 1] = s; }
    }
    return out;
  }

  function pathOf(picked, startMs, windowMs, yMax, step) {
    var d = "", pen = false, py = "";
    for (var i = 0; i < picked.length; i++) {
      var s = picked[i];
      if (s.nil) { pen = false; continue; }
      var x = coord(geo.left + (s.ms - startMs) / windowMs * plotW);
      var y = coord(geo.top + plotH - s.v / yMax * plotH);
      if (!pen) {
        d += "M" + x + "," + y;
      } else if (step) {
        d += "H" + x;
        if (y !== py) { d += "V" + y; }
      } else {
        d += "L" + x + "," + y;
      }
      pen = true; py = y;
    }
    return d;
  }

  function formatAxis(format, v) {
    if (format === "seconds") { return formatSeconds(v); }
    if (format === "percent") { return formatPercent(v); }
    return formatNumber(v);
  }

  // chartWindow is the span of the time axis: back to the oldest point of
  // the history within the longest window, rounded up to a whole minute.
  function chartWindow(history, endMs) {
    for (var i = 0; i < history.length; i++) {
      var ms = parseMs(history[i].at);
      if (ms < endMs - geo.window_ms || ms > endMs) { continue; }
      var w = Math.floor((endMs - ms + 59999) / 60000) * 60000;
      return Math.min(Math.max(w, geo.min_window_ms), geo.window_ms);
    }
    return geo.window_ms;
  }

  function renderChart(spec, g, generatedMs) {
    var history = g.history || [];
    var endMs = generatedMs, windowMs = chartWindow(history, endMs), startMs = endMs - windowMs;
    var maxV = 0, descs = [], series = [];
    for (var i = 0; i < spec.series.length; i++) {
      var s = spec.series[i];
      var all = [];
      for (var j = 0; j < history.length; j++) {
        var p = history[j];
        var val = p[s.key];
        all.push({ ms: parseMs(p.at), v: typeof val === "number" ? val : 0, nil: typeof val !== "number" });
      }
      series.push(pick(all, startMs, windowMs, s.step));
      var now = null, high = -Infinity;
      for (j = 0; j < all.length; j++) {
        var x = all[j];
        if (x.nil || x.ms < startMs || x.ms > endMs) { continue; }
        now = x.v;
        high = Math.max(high, x.v);
      }
      if (now === null) { descs.push(s.label + ": no data"); continue; }
      maxV = Math.max(maxV, high);
      descs.push(s.label + ": now " + formatAxis(spec.format, now) + ", highest " + formatAxis(spec.format, high));
    }
    var ref = 0;
    if (spec.ref) {
      var r = lookup(g, spec.ref);
      if (typeof r === "number" && r > 0) {
        ref = r;
        maxV = Math.max(maxV, r);
        descs.push(spec.ref_label + " " + formatAxis(spec.format, r));
      }
    }
    var yMax = niceMax(maxV);
    var out = {
      yLabels: [formatAxis(spec.format, 0), formatAxis(spec.format, yMax / 2), formatAxis(spec.format, yMax)],
      xLabels: [minuteClock(startMs), minuteClock(startMs + windowMs / 2), minuteClock(endMs)],
      paths: {}, empty: true, ref: null, refY: geo.top,
      desc: "Last " + formatSeconds(Math.floor(windowMs / 1000)) + ". " + descs.join("; ") + "."
    };
    for (i = 0; i < spec.series.length; i++) {
      var d = pathOf(series[i], startMs, windowMs, yMax, spec.series[i].step);
      if (d !== "") { out.empty = false; }
      out.paths[spec.series[i].key] = d;
    }
    if (ref > 0) {
      out.ref = spec.ref_label + " " + formatAxis(spec.format, ref);
      out.refY = Math.round((geo.top + plotH - ref / yMax * plotH) * 10) / 10;
    }
    return out;
  }

  function drawChart(fig, spec, g, generatedMs) {
    var c = renderChart(spec, g, generatedMs);
    fig.querySelectorAll("[data-series]").forEach(function (p) {
      p.setAttribute("d", c.paths[p.getAttribute("data-series")] || "");
    });
    fig.querySelectorAll("[data-ylabel]").forEach(function (t) { t.textContent = c.yLabels[+t.getAttribute("data-ylabel")]; });
    fig.querySelectorAll("[data-xlabel]").forEach(function (t) { t.textContent = c.xLabels[+t.getAttribute("data-xlabel")]; });
    var desc = fig.querySelector("[data-desc]");
    if (desc) { desc.textContent = c.desc; }
    var line = fig.querySelector("[data-ref]"), label = fig.querySelector("[data-ref-label]");
    if (line && label) {
      line.setAttribute("y1", String(c.refY));
      line.setAttribute("y2", String(c.refY));
      label.setAttribute("y", String(c.refY));
      label.textContent = c.ref || "";
      line.toggleAttribute("hidden", c.ref === null);
      label.toggleAttribute("hidden", c.ref === null);
    }
    var nodata = fig.querySelector("[data-nodata]");
    if (nodata) { nodata.toggleAttribute("hidden", !c.empty); }
  }

  // ---- The chart of throughput against workers, as knee.go draws it.

  var svgNS = "http://www.w3.org/2000/svg";

  function isFiniteNumber(v) { return typeof v === "number" && isFinite(v); }

  function rangeText(lo, hi) {
    var a = formatNumber(lo), b = formatNumber(hi);
    return a !== b ? a + " to " + b : b;
  }

  function minutesText(n) { return n === 1 ? "1 good minute" : n + " good minutes"; }

  function renderKnee(spec, g) {
    var pts = [];
    (g.fleet_minutes || []).forEach(function (m) {
      if (isFiniteNumber(m.workers) && isFiniteNumber(m.completions_per_second) &&
          m.workers >= 0 && m.completions_per_second >= 0) { pts.push(m); }
    });
    if (pts.length > spec.max_points) { pts = pts.slice(pts.length - spec.max_points); }
    var maxW = 0, maxY = 0, minW = Infinity, minY = Infinity, saturated = 0;
    pts.forEach(function (m) {
      maxW = Math.max(maxW, m.workers); maxY = Math.max(maxY, m.completions_per_second);
      minW = Math.min(minW, m.workers); minY = Math.min(minY, m.completions_per_second);
      if (m.saturated === true) { saturated++; }
    });
    var ceiling = 0;
    var c = lookup(g, spec.ceiling);
    if (typeof c === "number" && c > 0) { ceiling = c; }
    var xMax = niceMax(Math.max(maxW, ceiling)), yMax = niceMax(maxY);
    function xOf(w) { return geo.left + w / xMax * plotW; }
    function yOf(v) { return geo.top + plotH - v / yMax * plotH; }
    var midX = geo.left + Math.floor(plotW / 2);
    var out = {
      yLabels: [formatNumber(0), formatNumber(yMax / 2), formatNumber(yMax)],
      xLabels: [formatNumber(0), formatNumber(xMax / 2), formatNumber(xMax) + (xMax === 1 ? " worker" : " workers")],
      points: pts.map(function (m) {
        return { x: coord(xOf(m.workers)), y: coord(yOf(m.completions_per_second)), sat: m.saturated === true };
      }),
      empty: pts.length === 0, ceiling: null,
      ceilingX: coord(geo.left), ceilingLabelX: coord(geo.left + spec.label_gap), ceilingAnchor: "start"
    };
    var desc;
    if (out.empty) {
      desc = "No good minute of the fleet measured yet.";
    } else {
      var last = pts[pts.length - 1];
      desc = "Last " + minutesText(pts.length) + ": " + rangeText(minW, maxW) +
        " workers in service completed " + rangeText(minY, maxY) + " msg/s; " +
        saturated + " saturated (filled dots); newest " + formatNumber(last.workers) +
        " workers at " + formatNumber(last.completions_per_second) + " msg/s.";
    }
    if (ceiling > 0) {
      out.ceiling = spec.ceiling_label + " " + formatNumber(ceiling);
      var x = xOf(ceiling);
      out.ceilingX = coord(x);
      if (x > midX) {
        out.ceilingLabelX = coord(x - spec.label_gap); out.ceilingAnchor = "end";
      } else {
        out.ceilingLabelX = coord(x + spec.label_gap);
      }
      desc += " Downstream ceiling near " + formatNumber(ceiling) + " workers (dashed line).";
    } else if (!out.empty) {
      desc += " No downstream ceiling found.";
    }
    out.desc = desc;
    return out;
  }

  function drawKnee(fig, spec, g) {
    var c = renderKnee(spec, g);
    fig.querySelectorAll("[data-ylabel]").forEach(function (t) { t.textContent = c.yLabels[+t.getAttribute("data-ylabel")]; });
    fig.querySelectorAll("[data-xlabel]").forEach(function (t) { t.textContent = c.xLabels[+t.getAttribute("data-xlabel")]; });
    var desc = fig.querySelector("[data-desc]");
    if (desc) { desc.textContent = c.desc; }
    var group = fig.querySelector("[data-points]");
    if (group) {
      var dots = c.points.map(function (p) {
        var e = document.createElementNS(svgNS, "circle");
        e.setAttribute("class", p.sat ? "dot sat" : "dot");
        e.setAttribute("cx", p.x);
        e.setAttribute("cy", p.y);
        e.setAttribute("r", String(spec.radius));
        return e;
      });
      group.replaceChildren.apply(group, dots);
    }
    var line = fig.querySelector("[data-ceiling]"), label = fig.querySelector("[data-ceiling-label]");
    if (line && label) {
      line.setAttribute("x1", c.ceilingX);
      line.setAttribute("x2", c.ceilingX);
      label.setAttribute("x", c.ceilingLabelX);
      label.setAttribute("text-anchor", c.ceilingAnchor);
      label.textContent = c.ceiling || "";
      line.toggleAttribute("hidden", c.ceiling === null);
      label.toggleAttribute("hidden", c.ceiling === null);
    }
    var key = fig.querySelector("[data-ceiling-key]");
    if (key) { key.toggleAttribute("hidden", c.ceiling === null); }
    var nodata = fig.querySelector("[data-nodata]");
    if (nodata) { nodata.toggleAttribute("hidden", !c.empty); }
  }

  // ---- Lists.

  function el(tag, text, attrs) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) { e.textContent = text; }
    if (attrs) { Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); }); }
    return e;
  }

  function noneRow(cols, text) {
    var tr = el("tr", null, { "class": "none" });
    tr.appendChild(el("td", text, { colspan: String(cols) }));
    return tr;
  }

  function fillList(list, g) {
    var kind = list.getAttribute("data-list");
    var items = [];
    if (kind === "decision.reasons") {
      if (g.decision === null) {
        items.push(el("li", "No decision yet.", { "class": "none" }));
      } else if (!g.decision.reasons || g.decision.reasons.length === 0) {
        items.push(el("li", "No reasons given.", { "class": "none" }));
      } else {
        g.decision.reasons.forEach(function (r) { items.push(el("li", r)); });
      }
    } else if (kind === "switches") {
      (g.switches || []).forEach(function (s) { items.push(el("li", s)); });
      list.hidden = items.length === 0;
    } else if (kind === "failures") {
      (g.failures || []).forEach(function (f) {
        var tr = el("tr");
        [f.queue, f.region, f["class"], f.message].forEach(function (t) { tr.appendChild(el("td", t)); });
        items.push(tr);
      });
      if (items.length === 0) { items.push(noneRow(4, "None: every queue answered.")); }
    } else if (kind === "changes") {
      var cs = (g.changes || []).slice().reverse();
      cs.forEach(function (c) {
        var tr = el("tr");
        var th = el("th", null, { scope: "row" });
        var ms = parseMs(c.at);
        th.appendChild(el("time", clockOf(ms), { datetime: isoOf(ms) }));
        tr.appendChild(th);
        tr.appendChild(el("td", formatNumber(c.from) + " → " + formatNumber(c.to), { "class": "num" }));
        var reasons = (c.reasons || []).slice();
        if (c.not_acted) { reasons.push("not acted on: " + c.not_acted.message); }
        tr.appendChild(el("td", reasons.join("; ")));
        items.push(tr);
      });
      if (items.length === 0) { items.push(noneRow(3, "No change of the desired count yet.")); }
    } else {
      return;
    }
    list.replaceChildren.apply(list, items);
  }

  // ---- Applying a document.

  var levelClasses = ["level-ok", "level-info", "level-warn", "level-bad"];

  function applyGroup(root, g, generatedMs) {
    var diag = diagnosisOf(g.decision === null ? "unknown" : g.decision.diagnosis);
    root.querySelectorAll("[data-field]").forEach(function (e) {
      e.textContent = formatField(g, e.getAttribute("data-field"), e.getAttribute("data-fmt"), e.getAttribute("data-null"));
    });
    root.querySelectorAll("[data-show]").forEach(function (e) {
      e.hidden = !truthy(lookup(g, e.getAttribute("data-show")));
    });
    root.querySelectorAll("[data-meter]").forEach(function (m) {
      var x = lookup(g, m.getAttribute("data-meter")), r = lookup(g, m.getAttribute("data-of"));
      var ok = typeof x === "number" && typeof r === "number" && r > 0;
      m.hidden = !ok;
      m.value = ok ? Math.min(x / r, 2) : 0;
    });
    root.querySelectorAll("[data-level]").forEach(function (e) {
      levelClasses.forEach(function (c) { e.classList.remove(c); });
      e.classList.add("level-" + diag.level);
    });
    root.querySelectorAll("[data-diag]").forEach(function (e) {
      e.textContent = e.getAttribute("data-diag") === "means" ? diag.means : diag.advice;
    });
    root.querySelectorAll("[data-list]").forEach(function (l) { fillList(l, g); });
    root.querySelectorAll("[data-chart]").forEach(function (fig) {
      var id = fig.getAttribute("data-chart");
      for (var i = 0; i < cfg.charts.length; i++) {
        if (cfg.charts[i].id === id) { drawChart(fig, cfg.charts[i], g, generatedMs); }
      }
    });
    root.querySelectorAll("[data-knee]").forEach(function (fig) {
      if (cfg.knee && fig.getAttribute("data-knee") === cfg.knee.id) { drawKnee(fig, cfg.knee, g); }
    });
  }

  function sameGroups(doc) {
    var names = [];
    document.querySelectorAll("section.group[data-group]").forEach(function (s) { names.push(s.getAttribute("data-group")); });
    if (names.length !== doc.groups.length) { return false; }
    for (var i = 0; i < names.length; i++) { if (names[i] !== doc.groups[i].name) { return false; } }
    return true;
  }

  function apply(doc) {
    if (!sameGroups(doc)) {
      // Groups were added, removed or renamed by a reload: render afresh.
      window.location.reload();
      return;
    }
    var generatedMs = parseMs(doc.generated_at);
    var roots = document.querySelectorAll("[data-group]");
    doc.groups.forEach(function (g) {
      roots.forEach(function (r) { if (r.getAttribute("data-group") === g.name) { applyGroup(r, g, generatedMs); } });
    });
    var health = document.querySelector("[data-health]");
    if (health) {
      var h = doc.health;
      health.hidden = !h;
      health.classList.toggle("info", !!h && h.state === "starting");
      health.classList.toggle("bad", !h || h.state !== "starting");
      var ht = health.querySelector("[data-health-text]");
      if (ht) { ht.textContent = h ? h.state + ": " + h.detail : ""; }
    }
    document.querySelectorAll("[data-doc-text]").forEach(function (e) {
      var v = doc;
      e.getAttribute("data-doc-text").split(".").forEach(function (k) { v = v == null ? v : v[k]; });
      e.textContent = v == null ? "" : String(v);
    });
    document.querySelectorAll("[data-doc-field]").forEach(function (e) {
      var v = doc[e.getAttribute("data-doc-field")];
      e.textContent = clockOf(parseMs(v));
      e.setAttribute("datetime", isoOf(parseMs(v)));
    });
    api.last = doc;
    api.applied++;
  }

  var live = document.querySelector("[data-live]");

  // setLive says how fresh the page is; it changes the text only when the
  // news changes, so screen readers do not repeat it every refresh.
  function setLive(text, stale) {
    if (!live) { return; }
    if (live.textContent !== text) { live.textContent = text; }
    live.classList.toggle("stale", stale);
  }

  var timer = null;

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(refresh, cfg.refresh_ms);
  }

  // refresh asks for the groups once, applies them, and schedules the next
  // refresh; the promise it returns settles when that is done.
  function refresh() {
    if (document.hidden) { schedule(); return Promise.resolve(); }
    var url = "api/v1/groups" + (cfg.group ? "?group=" + encodeURIComponent(cfg.group) : "");
    return fetch(url, { cache: "no-store", headers: { Accept: "application/json" } })
      .then(function (r) {
        if (!r.ok) { throw new Error("HTTP " + r.status); }
        return r.json();
      })
      .then(function (doc) {
        apply(doc);
        setLive("Refreshes every " + formatSeconds(cfg.refresh_ms / 1000) + ".", false);
      })
      .catch(function (err) {
        setLive("Refresh failed at " + clockOf(Date.now()) + " (" + err.message + "): these numbers may be old.", true);
      })
      .then(schedule);
  }

  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) { refresh(); }
  });

  var api = {
    last: null,
    applied: 0,
    refresh: refresh,
    fmt: {
      number: formatNumber, seconds: formatSeconds, percent: formatPercent,
      field: formatField, fixed: fixed, general: general, parseMs: parseMs
    },
    renderChart: renderChart,
    renderKnee: renderKnee
  };
  window.checker = api;
  setLive("Refreshes every " + formatSeconds(cfg.refresh_ms / 1000) + ".", false);
  schedule();
})();
