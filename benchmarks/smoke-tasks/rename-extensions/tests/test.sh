#!/bin/bash
# Shared-mode verifier: runs in the task container after the agent.
set -u
ok=0
[ -f /app/docs/intro.md ] && [ -f /app/docs/usage.md ] && [ -f /app/docs/notes.log ] && [ -z "$(ls /app/docs/*.txt 2>/dev/null)" ] && ok=1
ls /app/docs
if [ "$ok" = 1 ]; then echo PASS; echo 1 > /logs/verifier/reward.txt; else echo FAIL; echo 0 > /logs/verifier/reward.txt; fi
