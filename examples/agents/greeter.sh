#!/bin/sh
# An `exec` agent in JSON-lines mode (see examples/agents.toml): asks for a name, then greets.
# The message text arrives on stdin; A2A_HISTORY holds the task's earlier messages (JSON).
text=$(cat)
case "$A2A_HISTORY" in
  ""|"[]")
    echo '{"status": "working", "text": "thinking"}'
    echo '{"input_required": "What is your name?"}'
    ;;
  *)
    printf '{"artifact": "greeting", "text": "Hello, %s!", "last_chunk": true}\n' "$text"
    echo '{"complete": "greeted"}'
    ;;
esac
