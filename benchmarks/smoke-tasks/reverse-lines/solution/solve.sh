#!/bin/bash
# Reference solution. One command per paragraph (the scripted agent replays them).
set -e

tac /app/poem.txt > /app/reversed.txt
