#!/bin/bash
# Reference solution. One command per paragraph (the scripted agent replays them).
set -e

tail -n +2 /app/sales.csv | awk -F, '{s += $2} END {print s}' > /app/total.txt
