#!/bin/bash
# Reference solution. One command per paragraph (the scripted agent replays them).
set -e

wc -l < /app/data.txt > /app/count.txt
