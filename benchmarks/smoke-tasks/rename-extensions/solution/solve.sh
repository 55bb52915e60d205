#!/bin/bash
# Reference solution. One command per paragraph (the scripted agent replays them).
set -e

for f in /app/docs/*.txt; do mv "$f" "${f%.txt}.md"; done
