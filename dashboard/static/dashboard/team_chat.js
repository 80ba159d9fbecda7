// Team chat's live half. One WebSocket to /ws/team-chat (the session cookie signs it in):
// - server frames (see conversations/team_chat/consumers.py) refresh the region they touch
//   by firing `tc-refresh` on it; the region's hx-get fetches its server-rendered partial
//   (the open conversation's messages, the open thread, the sidebar's unread counts);
// - `presence` frames recolour the dots, `typing` frames show "X is typing…" for a while;
// - this page sends `typing` while its composer is typed in and a heartbeat every 25 s
//   (`away` while the tab is hidden). Reconnects with backoff unless signed out.
(function () {
  "use strict";
  var TYPING_SEND_MS = 3000, TYPING_SHOW_MS = 5000, HEARTBEAT_MS = 25000;
  var root, socket = null, typers = {}, lastTypingSent = 0;

  function byId(id) { return document.getElementById(id); }
  function refresh(id) { var el = byId(id); if (el) { htmx.trigger(el, "tc-refresh"); } }
  function send(frame) {
    if (socket && socket.readyState === WebSocket.OPEN) { socket.send(JSON.stringify(frame)); }
  }
  function heartbeat() { send({ type: "heartbeat", status: document.hidden ? "away" : "online" }); }
  function nameOf(userId) {
    var el = document.querySelector('[data-person="' + userId + '"]');
    return el ? el.getAttribute("data-name") : "Someone";
  }
  function scrollDown(el) { if (el) { el.scrollTop = el.scrollHeight; } }

  // --- Typing indicator ---------------------------------------------------------------
  function renderTyping() {
    var el = byId("typing");
    if (!el) { return; }
    var names = Object.keys(typers).map(nameOf);
    el.textContent = names.length === 0 ? "" :
      names.join(", ") + (names.length === 1 ? " is typing…" : " are typing…");
  }
  function showTyping(userId) {
    clearTimeout(typers[userId]);
    typers[userId] = setTimeout(function () { stopTyping(userId); }, TYPING_SHOW_MS);
    renderTyping();
  }
  function stopTyping(userId) {
    if (userId in typers) { clearTimeout(typers[userId]); delete typers[userId]; renderTyping(); }
  }

  // --- Server frames ------------------------------------------------------------------
  function isOpen(frame) {
    var channel = root.getAttribute("data-channel"), dm = root.getAttribute("data-dm");
    return (channel && frame.channel_id === channel) || (dm && frame.thread_id === dm);
  }
  function openThreadRoot() {
    var thread = document.querySelector("#thread-panel [data-root]");
    return thread ? thread.getAttribute("data-root") : null;
  }

  function onFrame(frame) {
    switch (frame.type) {
    case "ready":
      root.setAttribute("data-live-ready", "1");
      heartbeat();
      break;
    case "message.created": case "message.updated": case "message.deleted":
      if (frame.message) { stopTyping(frame.message.sender_user_id); }
      if (isOpen(frame)) { refresh("messages"); } else { refresh("tc-conversations"); }
      if (frame.type !== "message.created" && openThreadRoot()) { refresh("thread-replies"); }
      break;
    case "thread.reply":
      stopTyping(frame.message.sender_user_id);
      if (isOpen(frame)) { refresh("messages"); } else { refresh("tc-conversations"); }
      if (openThreadRoot() === frame.root_id) { refresh("thread-replies"); }
      break;
    case "typing":
      if (frame.user_id !== root.getAttribute("data-me") && isOpen(frame)) { showTyping(frame.user_id); }
      break;
    case "presence":
      document.querySelectorAll('[data-presence="' + frame.user_id + '"]').forEach(function (dot) {
        dot.setAttribute("data-status", frame.status);
        dot.title = frame.status;
        dot.firstElementChild.textContent = "(" + frame.status + ")";
      });
      break;
    case "member.added": case "member.removed": case "channel.updated": case "channel.deleted":
      refresh("tc-conversations");
      break;
    }
  }

  function connect(delay) {
    var scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + root.getAttribute("data-socket"));
    socket.onopen = function () { delay = 500; };
    socket.onmessage = function (message) {
      try { onFrame(JSON.parse(message.data)); } catch (e) { /* not a frame of ours */ }
    };
    socket.onclose = function (event) {
      root.removeAttribute("data-live-ready");
      if (event.code === 4401 || event.code === 4403) { return; }  // signed out or refused
      var next = Math.min(delay * 2, 15000);
      setTimeout(function () { connect(next); }, next);
    };
  }

  // --- Composer: typing frames, Enter sends, cleared after a successful post ----------
  function onInput(event) {
    var form = event.target.form;
    if (!form || Date.now() - lastTypingSent < TYPING_SEND_MS) { return; }
    var channel = form.getAttribute("data-typing-channel");
    var thread = form.getAttribute("data-typing-thread");
    if (channel) { send({ type: "typing", channel_id: channel }); }
    else if (thread) { send({ type: "typing", thread_id: thread }); }
    else { return; }
    lastTypingSent = Date.now();
  }
  function onKeydown(event) {
    if (event.target.tagName === "TEXTAREA" && event.key === "Enter" && !event.shiftKey &&
        !event.isComposing && event.target.form) {
      event.preventDefault();
      event.target.form.requestSubmit();
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    root = byId("team-chat");
    if (!root) { return; }
    root.addEventListener("input", onInput);
    root.addEventListener("keydown", onKeydown);
    document.body.addEventListener("htmx:afterRequest", function (event) {
      var form = event.detail.elt;
      if (form.hasAttribute && form.hasAttribute("data-reset") && event.detail.successful) {
        form.reset();
        lastTypingSent = 0;
      }
    });
    document.body.addEventListener("htmx:afterSwap", function (event) {
      var id = event.detail.target.id;
      if (id === "messages" || id === "thread-replies") { scrollDown(event.detail.target); }
      if (id === "thread-panel") { scrollDown(byId("thread-replies")); }
    });
    document.addEventListener("visibilitychange", heartbeat);
    scrollDown(byId("messages"));
    scrollDown(byId("thread-replies"));
    setInterval(heartbeat, HEARTBEAT_MS);
    connect(500);
  });
})();
