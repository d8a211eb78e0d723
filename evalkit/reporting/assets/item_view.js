/* The report page's item view (evalkit.reporting.page): the whole item (every turn of a thread, in order) with
   its texts, citations, retrieval, tool calls, every evaluator's outcome and the captured spans as a trace
   waterfall. Opened by a row click or a link to #item-N. textContent only; bar geometry through the CSSOM. */
(function () {
  "use strict";
  var page = window.EvalkitPage;
  if (!page) { return; }
  var cols = page.cols, evals = page.evals, el = page.el, fmt = page.formatNumber, value = page.value;
  var view = document.getElementById("item-view");
  var bodyNode = document.getElementById("iv-body");
  var rowsByItem = null;

  function rowsOf(item) {
    if (rowsByItem === null) {
      rowsByItem = {};
      for (var i = 0; i < page.data.rows; i++) {
        var key = String(cols.item[i]);
        (rowsByItem[key] = rowsByItem[key] || []).push(i);
      }
    }
    var rows = (rowsByItem[String(item)] || []).slice();
    rows.sort(function (a, b) { return (cols.turn[a] || 0) - (cols.turn[b] || 0); });
    return rows;
  }

  function field(parent, label, content) {
    var box = el("div", "iv-field");
    box.appendChild(el("h4", null, label));
    if (content === null || content === undefined || content === "") {
      box.appendChild(el("span", "none", "\u2014"));
    } else if (typeof content === "string") {
      box.appendChild(el("div", "iv-text", content));
    } else {
      box.appendChild(content);
    }
    parent.appendChild(box);
  }

  function plain(v) {
    if (v === null || v === undefined) { return ""; }
    return typeof v === "object" ? JSON.stringify(v, null, 1) : String(v);
  }

  function citations(list) {
    if (!list || !list.length) { return null; }
    var ol = el("ol", "iv-list");
    list.forEach(function (c) {
      var li = el("li");
      li.appendChild(el("span", "iv-index", "[" + plain(c && c.index) + "] "));
      li.appendChild(el("span", null, plain(c && c.text)));
      if (c && c.source) { li.appendChild(el("div", "iv-source", plain(c.source))); }
      ol.appendChild(li);
    });
    return ol;
  }

  function retrieval(list) {
    if (!list || !list.length) { return null; }
    var box = el("div");
    list.forEach(function (ex) {
      if (!ex || typeof ex !== "object") { return; }
      var head = [ex.capability, ex.status, ex.totalResultCount === undefined ? null : ex.totalResultCount + " results"];
      box.appendChild(el("div", "iv-sub", head.filter(function (x) { return x !== null && x !== undefined; }).join(" \u00b7 ")));
      (ex.queries || []).forEach(function (q) {
        box.appendChild(el("div", "iv-query", "query: " + plain(q && q.queryString) +
          (q && q.filterExpression ? "  filter: " + plain(q.filterExpression) : "")));
      });
      var ol = el("ol", "iv-list");
      (ex.retrievalHits || []).forEach(function (hit) {
        var li = el("li");
        li.appendChild(el("div", "iv-source", "rank " + plain(hit && hit.rank) + " \u00b7 " + plain(hit && hit.webUrl)));
        ((hit && hit.extracts) || []).forEach(function (x) { li.appendChild(el("div", null, plain(x && x.text))); });
        ol.appendChild(li);
      });
      box.appendChild(ol);
    });
    return box;
  }

  function tools(calls) {
    if (!calls || typeof calls !== "object") { return null; }
    var box = el("div");
    var names = function (list) {
      return (list || []).map(function (f) {
        return f && typeof f === "object" ? [f.plugin_name, f.function_name].filter(Boolean).join(".") +
          (f.response_status !== undefined ? " \u2192 " + f.response_status : "") : plain(f);
      });
    };
    if (calls.selected_functions) { box.appendChild(el("div", null, "selected: " + names(calls.selected_functions).join(", "))); }
    if (calls.executions) { box.appendChild(el("div", null, "executed: " + names(calls.executions).join(", "))); }
    if (!calls.selected_functions && !calls.executions) { box.appendChild(el("pre", "iv-text", plain(calls))); }
    return box;
  }

  /* Every judgment of a row judged K times, in sample order: its verdict, score and reason. The ones that went
     the other way from most judgments (on a tie: from the row's verdict) are the flipped ones, highlighted. */
  function judgments(judged, result) {
    if (!judged.v || !judged.v.length) { return null; }
    var passed = judged.v.reduce(function (a, b) { return a + b; }, 0), n = judged.v.length;
    var odd = passed * 2 < n ? 1 : passed * 2 > n ? 0 : (result === "pass" ? 0 : 1);
    var list = el("ol", "iv-judgments");
    judged.v.forEach(function (verdict, j) {
      var flipped = judged.f && verdict === odd;
      var item = el("li", "iv-judgment" + (flipped ? " flipped" : ""));
      item.appendChild(el("span", "iv-j-verdict " + (verdict ? "pass" : "fail"), verdict ? "pass" : "fail"));
      item.appendChild(el("span", "iv-j-score", "score " + fmt(judged.s[j])));
      if (flipped) { item.appendChild(el("span", "iv-j-flip", "flipped")); }
      var reason = judged.m && judged.m[j];
      if (reason) { item.appendChild(el("span", "iv-j-reason", reason)); }
      list.appendChild(item);
    });
    return list;
  }

  function evaluatorTable(i) {
    var table = el("table", "iv-evals");
    var head = el("tr");
    ["evaluator", "outcome", "score", "threshold", "reason / error"].forEach(function (h) { head.appendChild(el("th", null, h)); });
    table.appendChild(el("thead")).appendChild(head);
    var tbody = table.appendChild(el("tbody"));
    for (var k = 0; k < evals.length; k++) {
      var pre = "e" + k + ".";
      var result = cols[pre + "result"][i];
      if (result === null) { continue; }
      var tr = el("tr");
      tr.appendChild(el("th", null, evals[k].name));
      tr.appendChild(el("td")).appendChild(page.badge(result));
      tr.appendChild(el("td", "num", fmt(cols[pre + "score"][i])));
      tr.appendChild(el("td", "num", fmt(value(pre + "threshold", i))));
      var cell = el("td");
      var judged = value(pre + "samples", i);  /* --samples K: every judgment, flaky or not */
      if (judged) {
        cell.appendChild(el("div", "iv-samples" + (judged.f ? " flaky" : ""), page.samplesText(judged)));
        var list = judgments(judged, result);
        if (list) { cell.appendChild(list); }
      }
      if (cols[pre + "reason"][i]) { cell.appendChild(el("div", "iv-text", cols[pre + "reason"][i])); }
      if (cols[pre + "error"][i]) { cell.appendChild(el("div", "err", cols[pre + "error"][i])); }
      tr.appendChild(cell);
      tbody.appendChild(tr);
    }
    return tbody.children.length ? table : null;
  }

  function waterfall(spans) {
    if (!spans || !spans.length) { return null; }
    var end = 0, records = 0;
    spans.forEach(function (s) { end = Math.max(end, s.s + s.d); records += s.r ? 1 : 0; });
    end = end || 1;
    var box = el("div", "waterfall");
    var count = (spans.length - records) + " spans" + (records ? ", " + records + " event records" : "");
    box.appendChild(el("div", "iv-sub", count + " over " + fmt(end, "ms")));
    spans.forEach(function (s) {
      var kind = s.r ? " span-record" : (s.st === "ERROR" ? " span-error" : "");
      var line = el("details", "span-row" + kind);
      var summary = el("summary");
      var name = el("span", "span-name", s.n);
      name.style.paddingLeft = (s.l * 0.9) + "em";
      summary.appendChild(name);
      var lane = el("span", "span-lane");
      var bar = el("span", "span-bar");
      bar.style.left = (100 * s.s / end) + "%";
      bar.style.width = Math.max(0.4, 100 * s.d / end) + "%";
      lane.appendChild(bar);
      summary.appendChild(lane);
      var when = s.r ? "@ +" + fmt(s.s, "ms") : "+" + fmt(s.s, "ms") + " \u00b7 " + fmt(s.d, "ms");
      summary.appendChild(el("span", "span-time", when));
      summary.appendChild(el("span", "span-status", s.st));
      line.appendChild(summary);
      var attrs = el("table", "span-attrs");
      Object.keys(s.a || {}).forEach(function (key) {
        var tr = el("tr");
        tr.appendChild(el("th", null, key));
        tr.appendChild(el("td", null, plain(s.a[key])));
        attrs.appendChild(tr);
      });
      if (s.r && s.b !== null && s.b !== undefined) {
        var body = el("tr", "record-body");
        body.appendChild(el("th", null, "body"));
        body.appendChild(el("td")).appendChild(el("pre", null, plain(s.b)));
        attrs.appendChild(body);
      }
      if (!attrs.children.length) { attrs.appendChild(el("tr")).appendChild(el("td", "none", "no attributes")); }
      line.appendChild(attrs);
      box.appendChild(line);
    });
    return box;
  }

  function turn(i, many) {
    var section = el("section", "iv-turn");
    section.id = "iv-row-" + i;
    var head = el("h3", null, many ? "Turn " + cols.turn[i] : page.itemLabel(i));
    if (cols.status[i]) { head.appendChild(page.badge(cols.status[i])); }
    section.appendChild(head);
    if (cols.error[i]) { section.appendChild(el("div", "err", cols.error[i])); }
    var tags = value("tags", i);
    if (tags && !many) { section.appendChild(el("div", "tags", "tags: " + tags.join(", "))); }
    var grid = el("div", "iv-grid");
    field(grid, "Prompt", cols.prompt[i]);
    field(grid, "Response", cols.response[i] === null ? "(no response)" : cols.response[i]);
    field(grid, "Expected response", cols.expected[i]);
    field(grid, "Context", plain(value("context", i)));
    section.appendChild(grid);
    var extras = [["Citations", citations(value("citations", i))], ["Retrieval", retrieval(value("retrieval", i))],
      ["Tool calls", tools(value("tools", i))], ["Evaluators", evaluatorTable(i)], ["Trace", waterfall(value("spans", i))]];
    extras.forEach(function (pair) { if (pair[1]) { field(section, pair[0], pair[1]); } });
    return section;
  }

  function open(item) {
    var rows = rowsOf(item);
    if (!rows.length) { close(false); return; }
    var first = rows[0];
    var title = "Item #" + item + (cols.thread[first] ? " \u00b7 thread " + cols.thread[first] : "");
    document.getElementById("iv-title").textContent = title;
    var fragment = document.createDocumentFragment();
    var many = rows.length > 1 || cols.turn[first] !== null;
    if (many && value("tags", first)) { fragment.appendChild(el("div", "tags", "tags: " + value("tags", first).join(", "))); }
    rows.forEach(function (i) { fragment.appendChild(turn(i, many)); });
    bodyNode.replaceChildren(fragment);
    view.hidden = false;
    document.body.classList.add("iv-open");
    document.getElementById("iv-close").focus();
  }

  function close(resetHash) {
    view.hidden = true;
    document.body.classList.remove("iv-open");
    if (resetHash && window.location.hash) {
      window.history.pushState("", document.title, window.location.pathname + window.location.search);
    }
  }

  function route() {
    var match = /^#item-(.+)$/.exec(window.location.hash);
    if (match) { open(decodeURIComponent(match[1])); } else { close(false); }
  }

  document.getElementById("iv-close").addEventListener("click", function () { close(true); });
  view.addEventListener("click", function (event) { if (event.target === view) { close(true); } });
  document.addEventListener("keydown", function (event) { if (event.key === "Escape" && !view.hidden) { close(true); } });
  window.addEventListener("hashchange", route);
  route();
})();
