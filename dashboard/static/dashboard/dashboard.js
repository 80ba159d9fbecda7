// The dashboard's own script (htmx itself comes from the django-htmx package).
// - Error answers (4xx/5xx) are swapped too: the server retargets them into #flash.
// - The impersonation landing's URL fragment (#session=…) is dropped from the address bar:
//   the session cookie was set by the redirect, the token must not linger in history.
// - Dashboard.live: one WebSocket per page to /ws/dashboard; each event envelope is
//   re-dispatched on <body> as `live-event` and `live-<family>` (family: the part of the
//   event type before the first dot, e.g. live-message, live-conversation), so a page
//   refreshes a region with hx-trigger="live-message from:body". Reconnects with backoff.
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    if (window.htmx) {
      htmx.config.responseHandling = [
        { code: "204", swap: false },
        { code: "[23]..", swap: true },
        { code: "[45]..", swap: true, error: true },
      ];
    }
    if (location.hash.indexOf("#session=") === 0) {
      history.replaceState(null, "", location.pathname + location.search);
    }
    if (document.querySelector("[data-live]")) {
      window.Dashboard.live();
    }
  });

  var socket = null;
  var listeners = [];

  function connect(delay) {
    var scheme = location.protocol === "https:" ? "wss://" : "ws://";
    var path = document.body.getAttribute("data-live-url") || "/ws/dashboard";
    socket = new WebSocket(scheme + location.host + path);
    socket.onmessage = function (message) {
      var frame;
      try { frame = JSON.parse(message.data); } catch (e) { return; }
      if (frame.type === "ready") { document.body.setAttribute("data-live-ready", "1"); }
      if (frame.type !== "event") { return; }
      var type = frame.event.type || "";
      var family = type.split(".")[0];
      var detail = { event: frame.event };
      document.body.dispatchEvent(new CustomEvent("live-event", { detail: detail }));
      document.body.dispatchEvent(new CustomEvent("live-" + family, { detail: detail }));
      listeners.forEach(function (fn) { fn(frame.event); });
    };
    socket.onclose = function (event) {
      document.body.removeAttribute("data-live-ready");
      if (event.code === 4401 || event.code === 4403) { return; }  // signed out: stop
      var next = Math.min((delay || 500) * 2, 15000);
      setTimeout(function () { connect(next); }, next);
    };
  }

  window.Dashboard = {
    live: function (listener) {
      if (listener) { listeners.push(listener); }
      if (!socket) { connect(500); }
    },
  };
})();
