/* The report page (evalkit.reporting.page): charts, then the items table rendered one page at a time from the
   embedded JSON, with filters, search, sort and paging. Values are inserted with textContent only, never parsed
   as HTML. item_view.js (the whole item, its trace) uses window.EvalkitPage.
   Two steps, so a large run shows its first rows at once: this script runs as soon as the parser reaches it and
   draws the first page from the small "evalkit-first" block (the data's fields and its first rows); the parser
   then reads the whole data ("evalkit-data"), after which the next script calls EvalkitPage.load(), which makes
   filters, search, sort and paging work on every row (a change made before that is applied then). */
(function () {
  "use strict";
  var started = performance.now();
  var data = JSON.parse(document.getElementById("evalkit-first").textContent);
  var parsed = performance.now();
  var timings = [started, parsed];
  var cols = data.columns;
  var total = data.rows;
  var ready = false;
  var evals = data.evaluators;
  var KNOWN = { pass: "pass", fail: "fail", error: "error", partial: "partial" };
  var MARK = { pass: "\u2713", fail: "\u2717", error: "!", partial: "~" };
  var OUTCOMES = ["pass", "fail", "error"];
  var state = { status: "", evalFilter: "", tag: "", query: "", sort: "", page: 0, size: 50 };
  var order = [];
  var haystack = null;
  var byId = function (id) { return document.getElementById(id); };
  var body = byId("items-body");

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  /* A count and its noun, "1 row" / "3 rows": the plural rule of evalkit.analysis.formatting.count. */
  function counted(n, noun) { return n + " " + noun + (n === 1 ? "" : "s"); }

  /* The one place numbers are formatted for display (scores, thresholds, counts, rates). */
  function formatNumber(v, kind) {
    if (typeof v === "boolean") { return v ? "true" : "false"; }
    if (typeof v === "number") {
      if (kind === "rate") { return (Math.round(v * 1000) / 10).toFixed(1) + "%"; }
      if (kind === "ms") { return (v < 10 ? Math.round(v * 100) / 100 : Math.round(v * 10) / 10) + " ms"; }
      return Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000);
    }
    return v === null || v === undefined ? "" : String(v);
  }

  function badge(word) {
    return el("span", "badge " + (KNOWN[word] || "other"), word);
  }

  function column(name) { return cols[name] || null; }
  function value(name, i) { var c = cols[name]; return c ? c[i] : null; }

  function chip(k, i) {
    var pre = "e" + k + ".";
    var result = cols[pre + "result"][i];
    if (result === null) { return null; }
    var score = formatNumber(cols[pre + "score"][i]);
    var node = el("span", "chip " + (KNOWN[result] || "other"));
    node.appendChild(el("span", "chip-mark", MARK[result] || "?"));
    node.appendChild(el("span", "chip-name", evals[k].name));
    node.appendChild(el("b", null, score || result));
    var tip = evals[k].name + ": " + result + (score ? " \u00b7 score " + score : "");
    var thr = value(pre + "threshold", i);
    if (thr !== null && thr !== undefined) { tip += " (threshold " + formatNumber(thr) + ")"; }
    var judged = value(pre + "samples", i);
    if (judged && judged.f) {
      node.classList.add("flaky");
      node.appendChild(el("span", "chip-flaky", "flaky " + passedOf(judged)));
    }
    if (judged) { tip += "\n" + samplesText(judged); }
    var reason = cols[pre + "reason"][i] || cols[pre + "error"][i];
    node.title = reason ? tip + "\n" + reason : tip;
    return node;
  }

  /* --samples K (evalkit.reporting.page_samples): {p: pass share, n: K, f: flipped, s: scores, r: pass rule} */
  function passedOf(judged) {
    var count = judged.s.length || judged.n;
    return Math.round(judged.p * count) + "/" + count + " pass";
  }

  function samplesText(judged) {
    var count = judged.s.length || judged.n;
    var text = (judged.f ? "flaky: " : "") + Math.round(judged.p * count) + " of " + counted(count, "judgment") +
      " passed (" + formatNumber(judged.p, "rate") + ")";
    if (judged.s.length) { text += ", scores " + judged.s.map(function (v) { return formatNumber(v); }).join(", "); }
    if (count < judged.n) { text += "; " + (judged.n - count) + " of " + judged.n + " samples failed"; }
    return judged.r ? text + "; pass rule: " + judged.r : text;
  }

  function flipped(k, i) { var c = cols["e" + k + ".samples"]; return !!(c && c[i] && c[i].f); }

  function textCell(cls, text, emptyLabel) {
    var td = el("td", cls);
    if (text === null || text === undefined || text === "") {
      td.appendChild(el("span", "none", emptyLabel));
    } else {
      td.appendChild(el("div", "text", text));
    }
    return td;
  }

  function itemLabel(i) {
    var turn = cols.turn[i];
    return "#" + cols.item[i] + (turn === null ? "" : " \u00b7 turn " + turn);
  }

  function row(i) {
    var tr = el("tr");
    tr.dataset.row = String(i);
    tr.tabIndex = 0;
    var first = el("td", "item");
    first.appendChild(el("a", null, itemLabel(i))).href = "#item-" + cols.item[i];
    if (cols.thread[i]) { first.appendChild(el("div", "thread", cols.thread[i])); }
    var tags = value("tags", i);
    if (tags) { first.appendChild(el("div", "tags", tags.join(", "))); }
    tr.appendChild(first);
    var status = el("td", "status");
    if (cols.status[i]) { status.appendChild(badge(cols.status[i])); }
    if (cols.error[i]) { status.appendChild(el("div", "err", cols.error[i])); }
    tr.appendChild(status);
    tr.appendChild(textCell("prompt", cols.prompt[i], "\u2014"));
    tr.appendChild(textCell("response", cols.response[i], cols.response[i] === null ? "(no response)" : "(empty)"));
    tr.appendChild(textCell("expected", cols.expected[i], "\u2014"));
    var chips = el("td", "evals");
    for (var k = 0; k < evals.length; k++) {
      var c = chip(k, i);
      if (c) { chips.appendChild(c); }
    }
    tr.appendChild(chips);
    return tr;
  }

  function buildHaystack() {
    var fields = [cols.thread, cols.prompt, cols.response, cols.expected, cols.error];
    for (var k = 0; k < evals.length; k++) {
      fields.push(cols["e" + k + ".reason"], cols["e" + k + ".error"]);
    }
    haystack = new Array(total);
    for (var i = 0; i < total; i++) {
      var parts = [];
      for (var f = 0; f < fields.length; f++) {
        if (fields[f][i]) { parts.push(fields[f][i]); }
      }
      for (var j = 0; j < evals.length; j++) {
        if (flipped(j, i)) { parts.push("flaky " + evals[j].name); }
      }
      haystack[i] = parts.join("\n").toLowerCase();
    }
  }

  function sortOrder() {
    if (!state.sort) { return; }
    var parts = state.sort.split(":");
    var scores = cols["e" + parts[0] + ".score"];
    var sign = parts[1] === "desc" ? -1 : 1;
    var num = function (v) { return typeof v === "boolean" ? (v ? 1 : 0) : (typeof v === "number" ? v : null); };
    order.sort(function (a, b) {
      var x = num(scores[a]), y = num(scores[b]);
      if (x === null || y === null) { return x === null ? (y === null ? a - b : 1) : -1; }
      return x === y ? a - b : sign * (x - y);
    });
  }

  function applyFilters() {
    if (!ready) { state.page = 0; render(); return; }
    filterOrder();
    state.page = 0;
    render();
  }

  function filterOrder() {
    var query = state.query.trim().toLowerCase();
    if (query && haystack === null) { buildHaystack(); }
    var evalResults = null;
    var evalWanted = "";
    var flakyOf = null;
    if (state.evalFilter) {
      var sep = state.evalFilter.indexOf(":");
      evalResults = cols["e" + state.evalFilter.slice(0, sep) + ".result"];
      evalWanted = state.evalFilter.slice(sep + 1);
      if (evalWanted === "flaky") {
        flakyOf = state.evalFilter.slice(0, sep);
        evalResults = null;
      }
    }
    var tags = column("tags");
    order = [];
    for (var i = 0; i < total; i++) {
      if (state.status && cols.status[i] !== state.status) { continue; }
      if (evalResults && evalResults[i] !== evalWanted) { continue; }
      if (flakyOf !== null && !flakyRow(flakyOf, i)) { continue; }
      if (state.tag && !(tags && tags[i] && tags[i].indexOf(state.tag) >= 0)) { continue; }
      if (query && haystack[i].indexOf(query) < 0) { continue; }
      order.push(i);
    }
    sortOrder();
  }

  /* Rows matching the filters: every row until the whole data is read (only its first rows can be shown). */
  function matching() { return ready ? order.length : total; }

  function pageCount() { return Math.max(1, Math.ceil(matching() / state.size)); }

  function render() {
    var start = state.page * state.size;
    var end = Math.min(matching(), start + state.size);
    var fragment = document.createDocumentFragment();
    for (var p = start; p < Math.min(end, order.length); p++) { fragment.appendChild(row(order[p])); }
    if (matching() === 0) {
      var empty = el("td", "none", total === 0 ? "No rows." : "No rows match the filters.");
      empty.colSpan = 6;
      var tr = el("tr");
      tr.appendChild(empty);
      fragment.appendChild(tr);
    }
    body.replaceChildren(fragment);
    var n = matching();
    var shown = n === 0 ? "0" : (end - start === 1 ? String(start + 1) : (start + 1) + "\u2013" + end);
    byId("f-count").textContent = shown + " of " + (n === total ? counted(n, "row")
      : counted(n, "matching row") + " (" + total + " in total)");
    byId("p-label").textContent = "page " + (state.page + 1) + " of " + pageCount();
    byId("p-first").disabled = byId("p-prev").disabled = state.page === 0;
    byId("p-next").disabled = byId("p-last").disabled = state.page >= pageCount() - 1;
    for (var s = 0; s < data.statuses.length; s++) {
      var button = byId("count-" + (data.statuses[s] || "all"));
      if (button) { button.setAttribute("aria-pressed", String(data.statuses[s] === state.status)); }
    }
  }

  function goTo(page) {
    state.page = Math.min(Math.max(0, page), pageCount() - 1);
    if (ready) { render(); }
  }

  function setStatus(value) {
    state.status = value;
    byId("f-status").value = value;
    applyFilters();
  }

  function option(select, value, label) {
    var node = el("option", null, label);
    node.value = value;
    select.appendChild(node);
  }

  /* "k:flaky" keeps the rows evaluator k's judgments flipped on; "*:flaky" those of any evaluator */
  function flakyRow(which, i) {
    if (which !== "*") { return flipped(parseInt(which, 10), i); }
    for (var k = 0; k < evals.length; k++) { if (flipped(k, i)) { return true; } }
    return false;
  }

  /* the filter's flaky choices, for each evaluator judged K times (again once the whole data is read) */
  var flakyChoices = {};
  function flakyOptions() {
    var select = byId("f-eval");
    for (var k = 0; k < evals.length; k++) {
      if (!cols["e" + k + ".samples"] || flakyChoices[k]) { continue; }
      if (!flakyChoices["*"]) { flakyChoices["*"] = true; option(select, "*:flaky", "any evaluator: flaky"); }
      flakyChoices[k] = true;
      option(select, k + ":flaky", evals[k].name + ": flaky");
    }
  }

  function fillControls() {
    var evalSelect = byId("f-eval");
    var sortSelect = byId("f-sort");
    for (var k = 0; k < evals.length; k++) {
      for (var w = 0; w < OUTCOMES.length; w++) {
        option(evalSelect, k + ":" + OUTCOMES[w], evals[k].name + ": " + OUTCOMES[w]);
      }
      option(sortSelect, k + ":asc", evals[k].name + " score \u2191");
      option(sortSelect, k + ":desc", evals[k].name + " score \u2193");
    }
    /* every row's tags, listed once in the data's fields (the rows may not be read yet) */
    var names = (data.tags || []).slice();
    names.sort();
    names.forEach(function (name) { option(byId("f-tag"), name, name); });
    byId("f-tag").parentNode.hidden = names.length === 0;
    flakyOptions();
  }

  fillControls();
  data.statuses.forEach(function (value) {
    var button = byId("count-" + (value || "all"));
    if (button) { button.addEventListener("click", function () { setStatus(value); }); }
  });
  byId("f-status").addEventListener("change", function () { setStatus(byId("f-status").value); });
  byId("f-eval").addEventListener("change", function () { state.evalFilter = byId("f-eval").value; applyFilters(); });
  byId("f-tag").addEventListener("change", function () { state.tag = byId("f-tag").value; applyFilters(); });
  byId("f-sort").addEventListener("change", function () { state.sort = byId("f-sort").value; applyFilters(); });
  byId("f-size").addEventListener("change", function () {
    var first = state.page * state.size;
    state.size = parseInt(byId("f-size").value, 10) || 50;
    goTo(Math.floor(first / state.size));
  });
  var timer = null;
  byId("f-query").addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { state.query = byId("f-query").value; applyFilters(); }, 200);
  });
  byId("p-first").addEventListener("click", function () { goTo(0); });
  byId("p-prev").addEventListener("click", function () { goTo(state.page - 1); });
  byId("p-next").addEventListener("click", function () { goTo(state.page + 1); });
  byId("p-last").addEventListener("click", function () { goTo(pageCount() - 1); });
  body.addEventListener("click", function (event) {
    var tr = event.target.closest("tr[data-row]");
    if (!tr || event.target.closest("a")) { return; }
    window.location.hash = "item-" + cols.item[parseInt(tr.dataset.row, 10)];
  });
  body.addEventListener("keydown", function (event) {
    var tr = event.target.closest("tr[data-row]");
    if (tr && event.key === "Enter") { window.location.hash = "item-" + cols.item[parseInt(tr.dataset.row, 10)]; }
  });
  byId("controls").hidden = false;
  byId("pager").hidden = false;
  for (var i = 0; i < Math.min(total, data.first); i++) { order.push(i); }
  render();
  var root = document.documentElement;
  timings.push(performance.now());
  // the first rows are in the table: ms since navigation start (benchmarks read it), and once a frame with
  // them has been drawn; load() follows when the parser has read the whole data, then charts.js
  root.dataset.tableMs = String(Math.round(performance.now()));
  requestAnimationFrame(function () {
    setTimeout(function () { root.dataset.tablePaintMs = String(Math.round(performance.now())); }, 0);
  });

  /* evalkit.reporting.page.compact: a column may come as distinct values plus codes, or as one constant */
  function expand(all) {
    Object.keys(all).forEach(function (name) {
      var c = all[name];
      if (Array.isArray(c)) { return; }
      var out = new Array(total);
      for (var i = 0; i < total; i++) { out[i] = c.k === "const" ? c.v : c.v[c.i[i]]; }
      all[name] = out;
    });
    return all;
  }

  /* The whole data is in the document: read it, then filter, sort and page as the controls now say. */
  function load() {
    timings.push(performance.now());
    var whole = JSON.parse(document.getElementById("evalkit-data").textContent);
    timings.push(performance.now());
    cols = expand(whole.columns);
    data.columns = cols;
    window.EvalkitPage.cols = cols;
    ready = true;
    flakyOptions();
    var page = state.page;
    filterOrder();
    state.page = Math.min(page, pageCount() - 1);
    render();
    timings.push(performance.now());
    root.dataset.timings = timings.map(Math.round).join(" ");
    root.dataset.rowsMs = String(Math.round(performance.now()));
    if (!document.querySelector("div.evalkit-figure")) { root.dataset.ready = "true"; }
  }

  window.EvalkitPage = { data: data, cols: cols, evals: evals, el: el, badge: badge, formatNumber: formatNumber,
    value: value, itemLabel: itemLabel, load: load, samplesText: samplesText };
})();
