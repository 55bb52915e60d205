#!/bin/bash
name=$1
echo "Hello, $nme!"
