// hopforge view: filter and sort the questions table in the page (no requests, works offline).
(function () {
  var table = document.getElementById("questions");
  if (!table) return;
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var get = function (id) { return document.getElementById(id); };
  function apply() {
    var text = get("f-text").value.trim().toLowerCase();
    var family = get("f-family").value, status = get("f-status").value;
    var lo = parseInt(get("f-min").value, 10), hi = parseInt(get("f-max").value, 10);
    var shown = 0;
    rows.forEach(function (tr) {
      var calls = parseInt(tr.dataset.minCalls, 10);
      var ok = (!text || tr.dataset.text.indexOf(text) >= 0)
        && (!family || tr.dataset.family === family)
        && (!status || (status === "accepted" ? tr.dataset.status === "accepted"
                        : tr.dataset.status.split(",").indexOf(status) >= 0))
        && (isNaN(lo) || calls >= lo) && (isNaN(hi) || calls <= hi);
      tr.hidden = !ok;
      if (ok) shown += 1;
    });
    get("shown-count").textContent = shown;
  }
  ["f-text", "f-family", "f-status", "f-min", "f-max"].forEach(function (id) {
    get(id).addEventListener("input", apply);
  });
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
    if (!th.dataset.sort) return;
    var dir = 1;
    th.addEventListener("click", function () {
      var key = function (tr) {
        var td = tr.cells[col], v = td.dataset.value || td.textContent;
        return th.dataset.sort === "num" ? parseFloat(v) || 0 : v.toLowerCase();
      };
      rows.sort(function (a, b) { var x = key(a), y = key(b); return x < y ? -dir : x > y ? dir : 0; });
      dir = -dir;
      rows.forEach(function (tr) { table.tBodies[0].appendChild(tr); });
    });
  });
})();
