/* The report page's charts (evalkit.reporting.page): every figure drawn from its JSON with the inlined plotly.js.
   It runs after plotly.js, which runs after the items table, so the table is usable before plotly compiles. */
(function () {
  "use strict";
  var config = { displaylogo: false, responsive: true, showSendToCloud: false };
  var byId = function (id) { return document.getElementById(id); };
  var shared = byId("figure-template");
  var template = shared ? JSON.parse(shared.textContent) : null;
  var nodes = document.querySelectorAll("div.evalkit-figure");
  for (var i = 0; i < nodes.length; i++) {
    var spec = JSON.parse(byId(nodes[i].id + "-data").textContent);
    var layout = spec.layout || {};
    if (template && !layout.template) { layout.template = template; }
    window.Plotly.newPlot(nodes[i], spec.data || [], layout, config);
  }
  // charts drawn: ms since navigation start (benchmarks read it)
  document.documentElement.dataset.chartsMs = String(Math.round(performance.now()));
  document.documentElement.dataset.ready = "true";
})();
