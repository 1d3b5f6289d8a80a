// The space-time diagram of a zabsim report: drawn from the run's messages, embedded as JSON, for
// the window of virtual time in view. Everything else on the page is static SVG and HTML.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("run-data").textContent);
  var svg = document.getElementById("diagram");
  var NS = "http://www.w3.org/2000/svg";
  var LABEL = 70, LANE = 30, TOP = 30, STEP = 30, MAX_VIEW = 2000;
  // Messages in the order they were sent; a view is a run of consecutive ones.
  var msgs = data.messages.slice().sort(function (a, b) { return a[2] - b[2] || a[3] - b[3]; });
  var end = Math.max(data.end, 1);
  var view = initialWindow();

  // firstSentAfter is the index of the first message sent at or after t.
  function firstSentAfter(t) {
    var lo = 0, hi = msgs.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (msgs[mid][2] < t) { lo = mid + 1; } else { hi = mid; } }
    return lo;
  }

  // The first view ends just after the violation and holds the 50 messages sent before it.
  function initialWindow() {
    var at = data.violation >= 0 ? data.violation : end;
    var upto = firstSentAfter(at + 1);
    return clampView(upto - 50, 60);
  }

  function clampView(start, count) {
    count = Math.max(4, Math.min(count, MAX_VIEW, Math.max(msgs.length, 4)));
    start = Math.max(0, Math.min(start, msgs.length - count));
    return { start: start, count: count };
  }

  function el(name, attrs, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) { e.setAttribute(k, attrs[k]); }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  function secs(ns) { return (ns / 1e9).toFixed(6) + " s"; }

  // draw lays the view's sends and deliveries out in event order, one column each, so that a
  // burst of messages within a microsecond is as readable as a slow exchange; the axis gives each
  // column's virtual time.
  function draw() {
    while (svg.firstChild) { svg.removeChild(svg.firstChild); }
    var shown = msgs.slice(view.start, view.start + view.count);
    var events = [];
    shown.forEach(function (m, i) { events.push([m[2], 0, i]); events.push([m[3], 1, i]); });
    var from = shown.length ? shown[0][2] : 0, to = from;
    shown.forEach(function (m) { to = Math.max(to, m[3]); });
    var marks = [];
    var last = view.start + view.count >= msgs.length;
    if (data.violation >= from && (data.violation <= to + 1 || last)) { marks.push([data.violation, 2, -1]); }
    data.leaders.forEach(function (l, i) { if (l[0] >= from && l[0] <= to) { marks.push([l[0], 3, i]); } });
    events = events.concat(marks);
    events.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1] || a[2] - b[2]; });
    var sendX = [], deliverX = [];
    var height = TOP + data.lanes.length * LANE + 10;
    var width = LABEL + (events.length + 1) * STEP + 160;
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);
    var defs = el("defs", {});
    [["arrow", "#1565c0"], ["arrow-cited", "#d50000"]].forEach(function (a) {
      var m = el("marker", { id: a[0], viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "6", markerHeight: "6", orient: "auto-start-reverse" });
      m.appendChild(el("path", { d: "M0 0 L10 5 L0 10 z", fill: a[1] }));
      defs.appendChild(m);
    });
    svg.appendChild(defs);
    function y(lane) { return TOP + lane * LANE + LANE / 2; }
    var laneLabels = [];
    data.lanes.forEach(function (name, i) {
      var g = el("g", { "class": "lane", "data-lane": name });
      g.appendChild(el("line", { "class": "lane-line", x1: LABEL, y1: y(i), x2: width - 10, y2: y(i) }));
      svg.appendChild(g);
      laneLabels.push(el("text", { "class": "lane-label", x: 4, y: y(i) + 4 }, name));
    });
    var lastLabel = -1e9, lastTime = -1, focusX = -1;
    events.forEach(function (e, k) {
      var x = LABEL + (k + 1) * STEP;
      if (e[0] !== lastTime && x - lastLabel >= 110) {
        svg.appendChild(el("line", { "class": "tick", x1: x, y1: 16, x2: x, y2: height }));
        svg.appendChild(el("text", { "class": "axis", x: x + 2, y: 12 }, secs(e[0])));
        lastLabel = x;
      }
      lastTime = e[0];
      if (e[1] === 0) { sendX[e[2]] = x; } else if (e[1] === 1) { deliverX[e[2]] = x; }
      else if (e[1] === 2) {
        var v = el("g", { "class": "violation cited", id: "diagram-violation" });
        v.appendChild(el("line", { x1: x, y1: 16, x2: x, y2: height }));
        v.appendChild(el("text", { x: x - 4, y: 26, "text-anchor": "end" }, "violation"));
        v.appendChild(el("title", {}, "the violation, at " + secs(e[0])));
        focusX = x;
        svg.appendChild(v);
      } else {
        var g = el("g", { "class": "leader" });
        g.appendChild(el("line", { "class": "leader-line", x1: x, y1: 16, x2: x, y2: height }));
        g.appendChild(el("text", { "class": "leader-text", x: x + 2, y: 26 }, data.leaders[e[2]][1]));
        svg.appendChild(g);
      }
    });
    // A broadcast (the same label from the same sender to several receivers) is labelled once.
    var labelled = {};
    shown.forEach(function (m, i) {
      var g = el("g", { "class": m[5] ? "msg cited" : "msg" });
      var x1 = sendX[i], x2 = deliverX[i], y1 = y(m[0]), y2 = y(m[1]);
      g.appendChild(el("line", { x1: x1, y1: y1, x2: x2, y2: y2 }));
      g.appendChild(el("title", {}, data.lanes[m[0]] + " \u2192 " + data.lanes[m[1]] + ": " + m[4] + " (sent " + secs(m[2]) + ", delivered " + secs(m[3]) + ")"));
      var label = m[4].length > 32 ? m[4].slice(0, 32) + "\u2026" : m[4];
      if (m[5] || labelled[m[0]] !== m[4]) {
        g.appendChild(el("text", { x: x1 + 3, y: y1 + (y2 > y1 ? 11 : -4), transform: "rotate(" + (y2 > y1 ? 28 : -28) + " " + x1 + " " + y1 + ")" }, label));
      }
      labelled[m[0]] = m[4];
      svg.appendChild(g);
    });
    laneLabels.forEach(function (t) { svg.appendChild(t); });
    var scroller = document.getElementById("diagram-scroll");
    scroller.scrollLeft = focusX >= 0 ? Math.max(0, focusX - scroller.clientWidth + 120) : 0;
    if (typeof stick === "function") { stick(scroller); }
    document.getElementById("window-label").textContent = "messages " + (view.start + 1) + " to " + (view.start + shown.length) +
      " of " + msgs.length + " (sent " + secs(from) + " to " + secs(to) + ")";
    document.getElementById("scrub").value = msgs.length ? Math.round(1000 * view.start / Math.max(msgs.length - view.count, 1)) : 0;
  }

  function show(start, count) { view = clampView(start, count); draw(); }
  function on(id, fn) { document.getElementById(id).addEventListener("click", fn); }
  on("zoom-in", function () { show(view.start + view.count / 4, Math.round(view.count / 2)); });
  on("zoom-out", function () { show(view.start - view.count / 2, view.count * 2); });
  on("pan-left", function () { show(view.start - Math.round(view.count * 0.75), view.count); });
  on("pan-right", function () { show(view.start + Math.round(view.count * 0.75), view.count); });
  on("goto-violation", function () { view = initialWindow(); draw(); });
  on("whole-run", function () { show(0, MAX_VIEW); });
  document.getElementById("scrub").addEventListener("input", function (e) {
    show(Math.round((msgs.length - view.count) * e.target.value / 1000), view.count);
  });
  Array.prototype.forEach.call(document.querySelectorAll("a.goto"), function (a) {
    a.addEventListener("click", function () {
      var t = a.getAttribute("data-time");
      if (t === "violation") { view = initialWindow(); draw(); return; }
      show(firstSentAfter(Number(t)) - 10, view.count);
    });
  });
  draw();
  var mark = document.querySelector("#violation-mark line");
  if (mark) {
    var box = document.getElementById("timeline").parentNode;
    box.scrollLeft = Math.max(0, Number(mark.getAttribute("x1")) - box.clientWidth + 200);
  }
  // Keep the lane names in view while a diagram scrolls sideways.
  function stick(box) {
    Array.prototype.forEach.call(box.querySelectorAll(".lane-label"), function (t) { t.setAttribute("x", box.scrollLeft + 4); });
  }
  Array.prototype.forEach.call(document.querySelectorAll(".scroll"), function (box) {
    box.addEventListener("scroll", function () { stick(box); });
    stick(box);
  });
  document.body.setAttribute("data-report-ready", "1");
})();
