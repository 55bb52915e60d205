#!/bin/bash
# Reference solution. One command per paragraph (the scripted agent replays them).
set -e

awk '!seen[$0]++' /app/emails.txt > /app/unique.txt
