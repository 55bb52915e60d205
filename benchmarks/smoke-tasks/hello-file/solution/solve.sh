#!/bin/bash
# Reference solution. One command per paragraph (the scripted agent replays them).
set -e

echo "Hello, world!" > /app/hello.txt
