#!/bin/bash
# Reference solution. One command per paragraph (the scripted agent replays them).
set -e

mkdir -p /app/project/src /app/project/tests /app/project/docs

printf '# project\n' > /app/project/README.md
