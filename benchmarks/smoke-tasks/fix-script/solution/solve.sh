#!/bin/bash
# Reference solution. One command per paragraph (the scripted agent replays them).
set -e

sed -i 's/\$nme/$name/' /app/greet.sh
