#!/bin/bash
# Reference solution. One command per paragraph (the scripted agent replays them).
set -e

sort -n /app/numbers.txt > /app/sorted.txt
