#!/bin/bash
# Reference solution. One command per paragraph (the scripted agent replays them).
set -e

tr 'A-Z' 'a-z' < /app/text.txt | tr -s ' ' '\n' | sort | uniq -c | sort -rn | awk 'NR==1 {print $2}' > /app/top.txt
