#!/bin/bash
# Shared-mode verifier: runs in the task container after the agent.
set -u
ok=0
expected=$(printf -- "-3\n0\n7\n7\n18\n42\n56\n99\n105\n1000")
[ "$(cat /app/sorted.txt 2>/dev/null)" = "$expected" ] && ok=1
echo "got: $(head -c 200 /app/sorted.txt 2>&1)"
if [ "$ok" = 1 ]; then echo PASS; echo 1 > /logs/verifier/reward.txt; else echo FAIL; echo 0 > /logs/verifier/reward.txt; fi
