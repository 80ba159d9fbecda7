// The developers' event feed: each platform event the dashboard socket re-dispatches on
// <body> as `live-event` (detail.event = the envelope) becomes a new first row of
// #event-rows, written with textContent only (event data is never parsed as HTML).
(function () {
  "use strict";

  function stamp(iso) {
    // "2026-11-29T00:30:12.345Z" -> "2026-11-29 00:30 UTC", as the server's `when` filter.
    var d = new Date(iso);
    if (isNaN(d.getTime())) { return iso || ""; }
    var two = function (n) { return (n < 10 ? "0" : "") + n; };
    return d.getUTCFullYear() + "-" + two(d.getUTCMonth() + 1) + "-" + two(d.getUTCDate()) +
      " " + two(d.getUTCHours()) + ":" + two(d.getUTCMinutes()) + " UTC";
  }

  function cell(row, text, asCode) {
    var td = document.createElement("td");
    if (asCode) {
      var code = document.createElement("code");
      code.textContent = text;
      td.appendChild(code);
    } else {
      td.textContent = text;
    }
    row.appendChild(td);
    return td;
  }

  function matches(row, filter) {
    return !filter || (row.getAttribute("data-event-type") || "").indexOf(filter) !== -1;
  }

  document.addEventListener("DOMContentLoaded", function () {
    var rows = document.getElementById("event-rows");
    var table = document.getElementById("event-feed");
    var filterInput = document.getElementById("event-filter");
    var state = document.getElementById("live-state");
    if (!rows || !table) { return; }
    var limit = parseInt(table.getAttribute("data-feed-size"), 10) || 50;

    function filterValue() { return filterInput ? filterInput.value.trim() : ""; }

    document.body.addEventListener("live-event", function (e) {
      var event = e.detail && e.detail.event;
      if (!event || !event.id) { return; }
      if (rows.querySelector('tr[data-event-id="' + CSS.escape(event.id) + '"]')) { return; }
      var empty = rows.querySelector(".empty-row");
      if (empty) { empty.remove(); }
      var row = document.createElement("tr");
      row.setAttribute("data-event-id", event.id);
      row.setAttribute("data-event-type", event.type || "");
      row.className = "new-row";
      cell(row, stamp(event.created_at));
      cell(row, event.type || "", true);
      cell(row, event.id, true).firstChild.className = "small";
      var details = document.createElement("details");
      var summary = document.createElement("summary");
      summary.textContent = "data";
      var pre = document.createElement("pre");
      pre.className = "code";
      pre.textContent = JSON.stringify(event.data, null, 2);
      details.appendChild(summary);
      details.appendChild(pre);
      cell(row, "").appendChild(details);
      row.hidden = !matches(row, filterValue());
      rows.insertBefore(row, rows.firstChild);
      while (rows.children.length > limit) { rows.removeChild(rows.lastChild); }
    });

    if (filterInput) {
      filterInput.addEventListener("input", function () {
        var value = filterValue();
        Array.prototype.forEach.call(rows.querySelectorAll("tr[data-event-id]"), function (row) {
          row.hidden = !matches(row, value);
        });
      });
    }

    if (state) {
      var show = function () {
        var live = document.body.hasAttribute("data-live-ready");
        state.textContent = live ? "(live)" : "(connecting…)";
        state.className = "live-state " + (live ? "on" : "off");
      };
      new MutationObserver(show).observe(document.body, { attributes: true,
        attributeFilter: ["data-live-ready"] });
      show();
    }
  });
})();
