#!/bin/bash
# Shared-mode verifier: runs in the task container after the agent.
set -u
ok=0
expected=$(printf "and so are you\nshell is neat\nviolets are blue\nroses are red")
[ "$(cat /app/reversed.txt 2>/dev/null)" = "$expected" ] && ok=1
echo "got: $(cat /app/reversed.txt 2>&1)"
if [ "$ok" = 1 ]; then echo PASS; echo 1 > /logs/verifier/reward.txt; else echo FAIL; echo 0 > /logs/verifier/reward.txt; fi
