// The inbox's own behaviour (htmx and the live feed do the rest, see dashboard.js):
// - the open conversation's row is marked in the list, also after a live refresh;
// - a joined co-browse panel connects to the relay with the token the join granted and
//   lists what the visitor's page sends.
(function () {
  "use strict";

  function markOpenRow() {
    var thread = document.querySelector("#thread [data-conversation]");
    var open = thread ? thread.getAttribute("data-conversation") : null;
    document.querySelectorAll("#conversation-rows .conversation-row").forEach(function (row) {
      var link = row.querySelector("a");
      if (row.getAttribute("data-conversation") === open) {
        link.setAttribute("aria-current", "true");
      } else {
        link.removeAttribute("aria-current");
      }
    });
  }

  function setState(panel, state, text) {
    var label = panel.querySelector(".cobrowse-state");
    if (label) {
      label.setAttribute("data-state", state);
      label.textContent = text;
    }
  }

  function connectCobrowse(panel) {
    var url = panel.getAttribute("data-ws-url");
    var token = panel.getAttribute("data-token");
    if (!url || !token || panel.cobrowseSocket) { return; }
    var socket = new WebSocket(url + "?token=" + encodeURIComponent(token));
    panel.cobrowseSocket = socket;
    socket.onopen = function () { setState(panel, "connected", "connected to the visitor"); };
    socket.onmessage = function (message) {
      var frame;
      try { frame = JSON.parse(message.data); } catch (e) { return; }
      if (frame.type === "session.ended") { setState(panel, "ended", "the session ended"); return; }
      var list = panel.querySelector(".cobrowse-events");
      if (!list || !frame.event) { return; }
      var item = document.createElement("li");
      item.textContent = (frame.from || "visitor") + ": " + (frame.event.type || "event") +
        (frame.event.url ? " " + frame.event.url : "");
      list.appendChild(item);
      while (list.children.length > 20) { list.removeChild(list.firstChild); }
    };
    socket.onclose = function (event) {
      if (event.code === 4410) { setState(panel, "ended", "the session ended"); }
      else if (event.code === 4401) { setState(panel, "refused", "the relay refused the token"); }
      else if (panel.isConnected) { setState(panel, "closed", "disconnected"); }
    };
  }

  function refresh() {
    markOpenRow();
    document.querySelectorAll("#cobrowse [data-ws-url]").forEach(connectCobrowse);
  }

  document.addEventListener("DOMContentLoaded", refresh);
  document.body.addEventListener("htmx:afterSettle", refresh);
})();
