#!/bin/bash
# Shared-mode verifier: runs in the task container after the agent.
set -u
ok=0
[ "$(bash /app/greet.sh Bob 2>&1)" = "Hello, Bob!" ] && ok=1
echo "got: $(bash /app/greet.sh Bob 2>&1)"
if [ "$ok" = 1 ]; then echo PASS; echo 1 > /logs/verifier/reward.txt; else echo FAIL; echo 0 > /logs/verifier/reward.txt; fi
