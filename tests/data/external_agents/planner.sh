#!/usr/bin/env bash
# An external cconductor agent in plain shell: two sub-questions, then the lock.
# Usage: planner.sh SESSION_DIR TASK_FILE
set -eu
session="$1"
agent="script-planner"
mkdir -p "$session/artifacts/$agent"
cat > "$session/artifacts/$agent/plan.json" <<'JSON'
{"query": "How fast is the cache?",
 "sub_questions": [
   {"id": "Q1", "question": "What latency does the cache reach?", "priority": "high", "keywords": ["latency"]},
   {"id": "Q2", "question": "How much memory does the cache use?", "priority": "medium", "keywords": ["memory"]}
 ]}
JSON
touch "$session/$agent.kg.lock"
