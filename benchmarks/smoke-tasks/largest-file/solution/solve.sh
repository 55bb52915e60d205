#!/bin/bash
# Reference solution. One command per paragraph (the scripted agent replays them).
set -e

ls -S /app/files | head -n 1 > /app/largest.txt
