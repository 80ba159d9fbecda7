"""The agents' runtime: a deployed agent answers its channel's inbound messages.

- `binding.on_inbound` (a messaging inbound listener) finds the active agent bound to the
  message's channel and number, lets it lead the thread (`ai_led`, `ai_agent_id`) and
  queues the reply task after the commit;
- `turn.run_turn` (the `agents.reply` Celery task) answers one inbound message: safety,
  handoff rules, retrieval with citations, tool calls, the reply through messaging;
- `state` keeps the per-conversation state and the agent's maintained counters.

See docs/agents.md.
"""
