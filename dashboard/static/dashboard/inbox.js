// The inbox's own behaviour (htmx and the live feed do the rest, see dashboard.js):
// - the open conversation's row is marked in the list, also after a live refresh;
// - `Inbox.concerns(detail, id)`: the hx-trigger filter of the thread's messages, so a
//   message event of another conversation does not refresh the open thread;
// - a joined co-browse panel connects to the relay with the token the join granted and
//   lists what the visitor's page sends.
(function () {
  "use strict";

  // Message ids of recent events that matched no shown message: a status event can come
  // before the refresh that shows its message, which then refreshes once more.
  var unmatched = [];

  function shown(messageId) {
    return Boolean(document.querySelector(
      '#thread-messages [data-message="' + CSS.escape(messageId) + '"]'));
  }

  window.Inbox = {
    // A message event concerns the open thread when it names the conversation (received
    // messages) or a message shown in it (status events carry no conversation id).
    concerns: function (detail, conversationId) {
      var data = (detail && detail.event && detail.event.data) || {};
      if (data.conversation_id === conversationId) { return true; }
      if (!data.message_id) { return false; }
      if (shown(data.message_id)) { return true; }
      unmatched.push(data.message_id);
      if (unmatched.length > 50) { unmatched.shift(); }
      return false;
    },
  };

  function recheckMessages() {
    var late = unmatched.filter(shown);
    if (!late.length) { return; }
    unmatched = unmatched.filter(function (id) { return late.indexOf(id) < 0; });
    var region = document.getElementById("thread-messages");
    if (region && window.htmx) { htmx.trigger(region, "inbox-recheck"); }
  }

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
    recheckMessages();
    document.querySelectorAll("#cobrowse [data-ws-url]").forEach(connectCobrowse);
  }

  document.addEventListener("DOMContentLoaded", refresh);
  document.body.addEventListener("htmx:afterSettle", refresh);
})();
