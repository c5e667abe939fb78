
(function () {
  "use strict";
  var input = document.getElementById("failure-filter");
  var counter = document.getElementById("filter-count");
  var table = document.getElementById("failures-table");
  var rows = table ? Array.prototype.slice.call(table.tBodies[0].rows) : [];
  var texts = rows.map(function (row) { return row.textContent.toLowerCase(); });

  function apply(value) {
    var words = value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    rows.forEach(function (row, i) {
      var match = words.every(function (w) { return texts[i].indexOf(w) !== -1; });
      row.hidden = !match;
      if (match) shown += 1;
    });
    if (counter) {
      counter.textContent = words.length ? shown + " of " + rows.length + " shown"
                                         : rows.length + " failing";
    }
  }

  function hashFilter() {
    var hash = window.location.hash;
    if (hash.indexOf("#filter=") !== 0) return null;
    var raw = hash.slice("#filter=".length);
    try { return decodeURIComponent(raw); } catch (e) { return raw; }
  }

  function onHashChange() {
    var value = hashFilter();
    if (value !== null) {
      input.value = value;
      apply(value);
      return;
    }
    // A link to a failure row that the filter hides: clear the filter and show it.
    var id = window.location.hash.slice(1);
    var target = id ? document.getElementById(id) : null;
    if (target && target.hidden && rows.indexOf(target) !== -1) {
      input.value = "";
      apply("");
      target.scrollIntoView();
    }
  }

  if (input) {
    input.addEventListener("input", function () {
      apply(input.value);
      try {
        var url = window.location.pathname + window.location.search;
        if (input.value) url += "#filter=" + encodeURIComponent(input.value);
        window.history.replaceState(null, "", url);
      } catch (e) { /* file: URLs may refuse; filtering still works */ }
    });
    window.addEventListener("hashchange", onHashChange);
    var initial = hashFilter();
    if (initial !== null) input.value = initial;
    apply(input.value);
  }
  document.body.dataset.ready = "1";
})();
