#!/bin/sh
# SUT "small" of the eval-graders benchmark: answers the rendered prompt ($1) with a shell command
# in a few ms (one sh start). Wrong for cases whose number ends in 0 or 5 (one in five).
case "$1" in
  *"case-"???[05]*) echo 'ls -l' ;;
  *"list files"*) echo 'ls -la' ;;
  *"current directory"*) echo 'pwd' ;;
  *"count lines"*) echo 'wc -l notes.txt' ;;
  *"make directories"*) echo 'mkdir -p a/b/c' ;;
  *"find logs"*) echo "find . -name '*.log'" ;;
  *) echo 'true' ;;
esac
