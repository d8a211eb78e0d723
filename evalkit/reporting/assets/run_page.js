/* report.html (evalkit.reporting.html_page): the items table, rendered one page at a time from the embedded
   JSON. Values are inserted with textContent only, never parsed as HTML. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("evalkit-data").textContent);
  var cols = data.columns;
  var total = data.rows;
  var evals = data.evaluators;
  var KNOWN = { pass: "pass", fail: "fail", error: "error", partial: "partial" };
  var state = { status: "", evalFilter: "", query: "", page: 0, size: 50 };
  var order = [];
  var haystack = null;
  var byId = function (id) { return document.getElementById(id); };
  var body = byId("items-body");
  var statusSelect = byId("f-status");
  var evalSelect = byId("f-eval");
  var queryInput = byId("f-query");
  var sizeSelect = byId("f-size");

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  /* A count and its noun, "1 row" / "3 rows": the plural rule of evalkit.analysis.formatting.count. */
  function counted(n, noun) { return n + " " + noun + (n === 1 ? "" : "s"); }

  function badge(word) {
    return el("span", "badge " + (KNOWN[word] || "other"), word);
  }

  function formatNumber(v) {
    if (typeof v === "boolean") { return v ? "true" : "false"; }
    if (typeof v === "number") {
      return Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000);
    }
    return v === null || v === undefined ? "" : String(v);
  }

  function textCell(value, emptyLabel) {
    var td = el("td");
    if (value === null || value === undefined || value === "") {
      td.appendChild(el("span", "none", emptyLabel));
    } else {
      td.appendChild(el("div", "text", value));
    }
    return td;
  }

  function itemCell(i) {
    var td = el("td");
    var turn = cols.turn[i];
    td.appendChild(el("div", null, "#" + cols.item[i] + (turn === null ? "" : " \u00b7 turn " + turn)));
    if (cols.thread[i]) { td.appendChild(el("div", "thread", cols.thread[i])); }
    return td;
  }

  function statusCell(i) {
    var td = el("td");
    var status = cols.status[i];
    if (status) { td.appendChild(badge(status)); }
    if (cols.error[i]) { td.appendChild(el("div", "err", cols.error[i])); }
    return td;
  }

  function evalCell(k, i) {
    var pre = "e" + k + ".";
    var result = cols[pre + "result"][i];
    var td = el("td");
    if (result === null) {
      td.appendChild(el("span", "na", "\u2014"));
      td.title = "not asked";
      return td;
    }
    td.appendChild(badge(result));
    var score = formatNumber(cols[pre + "score"][i]);
    if (score) { td.appendChild(el("span", "score", score)); }
    var thresholds = cols[pre + "threshold"];
    if (thresholds && thresholds[i] !== null) {
      td.appendChild(el("div", "thr", "threshold " + formatNumber(thresholds[i])));
    }
    var error = cols[pre + "error"][i];
    if (error) { td.appendChild(el("div", "err", error)); }
    var reason = cols[pre + "reason"][i];
    if (reason) {
      td.title = reason;
      var details = el("details");
      details.appendChild(el("summary", null, "reason"));
      details.appendChild(el("div", "text", reason));
      td.appendChild(details);
    }
    return td;
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
      haystack[i] = parts.join("\n").toLowerCase();
    }
  }

  function applyFilters() {
    var query = state.query.trim().toLowerCase();
    if (query && haystack === null) { buildHaystack(); }
    var evalResults = null;
    var evalWanted = "";
    if (state.evalFilter) {
      var sep = state.evalFilter.indexOf(":");
      evalResults = cols["e" + state.evalFilter.slice(0, sep) + ".result"];
      evalWanted = state.evalFilter.slice(sep + 1);
    }
    order = [];
    for (var i = 0; i < total; i++) {
      if (state.status && cols.status[i] !== state.status) { continue; }
      if (evalResults && evalResults[i] !== evalWanted) { continue; }
      if (query && haystack[i].indexOf(query) < 0) { continue; }
      order.push(i);
    }
    state.page = 0;
    render();
  }

  function pageCount() { return Math.max(1, Math.ceil(order.length / state.size)); }

  function render() {
    var start = state.page * state.size;
    var end = Math.min(order.length, start + state.size);
    var fragment = document.createDocumentFragment();
    for (var p = start; p < end; p++) {
      var i = order[p];
      var tr = el("tr");
      tr.appendChild(itemCell(i));
      tr.appendChild(statusCell(i));
      tr.appendChild(textCell(cols.prompt[i], "\u2014"));
      tr.appendChild(textCell(cols.response[i], cols.response[i] === null ? "(no response)" : "(empty)"));
      tr.appendChild(textCell(cols.expected[i], "\u2014"));
      for (var k = 0; k < evals.length; k++) { tr.appendChild(evalCell(k, i)); }
      fragment.appendChild(tr);
    }
    if (order.length === 0) {
      var empty = el("td", "none", total === 0 ? "No rows." : "No rows match the filters.");
      empty.colSpan = 5 + evals.length;
      var row = el("tr");
      row.appendChild(empty);
      fragment.appendChild(row);
    }
    body.replaceChildren(fragment);
    var shown = order.length === 0 ? "0" : (end - start === 1 ? String(start + 1) : (start + 1) + "\u2013" + end);
    byId("f-count").textContent = shown + " of " + (order.length === total ? counted(order.length, "row")
      : counted(order.length, "matching row") + " (" + total + " in total)");
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
    render();
  }

  function setStatus(value) {
    state.status = value;
    statusSelect.value = value;
    applyFilters();
  }

  for (var k = 0; k < evals.length; k++) {
    for (var w = 0; w < 2; w++) {
      var wanted = w === 0 ? "fail" : "error";
      var option = el("option", null, evals[k].name + ": " + wanted);
      option.value = k + ":" + wanted;
      evalSelect.appendChild(option);
    }
  }
  data.statuses.forEach(function (value) {
    var button = byId("count-" + (value || "all"));
    if (button) { button.addEventListener("click", function () { setStatus(value); }); }
  });
  statusSelect.addEventListener("change", function () { setStatus(statusSelect.value); });
  evalSelect.addEventListener("change", function () { state.evalFilter = evalSelect.value; applyFilters(); });
  sizeSelect.addEventListener("change", function () {
    var first = state.page * state.size;
    state.size = parseInt(sizeSelect.value, 10) || 50;
    goTo(Math.floor(first / state.size));
  });
  var timer = null;
  queryInput.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { state.query = queryInput.value; applyFilters(); }, 200);
  });
  byId("p-first").addEventListener("click", function () { goTo(0); });
  byId("p-prev").addEventListener("click", function () { goTo(state.page - 1); });
  byId("p-next").addEventListener("click", function () { goTo(state.page + 1); });
  byId("p-last").addEventListener("click", function () { goTo(pageCount() - 1); });
  byId("controls").hidden = false;
  byId("pager").hidden = false;
  applyFilters();
})();
