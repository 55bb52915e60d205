#!/bin/bash
# Shared-mode verifier: runs in the task container after the agent.
set -u
ok=0
[ -d /app/project/src ] && [ -d /app/project/tests ] && [ -d /app/project/docs ] && [ "$(head -n 1 /app/project/README.md 2>/dev/null)" = "# project" ] && ok=1
ls -R /app/project 2>&1 | head -20
if [ "$ok" = 1 ]; then echo PASS; echo 1 > /logs/verifier/reward.txt; else echo FAIL; echo 0 > /logs/verifier/reward.txt; fi
