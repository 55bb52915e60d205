#!/bin/bash
# Reference solution. One command per paragraph (the scripted agent replays them).
set -e

sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' /app/package.json > /app/version.txt
