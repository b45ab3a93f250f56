#!/bin/sh
# SUT "large" of the eval-graders benchmark: like small.sh but wrong only for cases whose number
# ends in 7 (one in ten), and with extra spaces the grader must see through.
case "$1" in
  *"case-"???7*) echo 'ls' ;;
  *"list files"*) echo 'ls  -la' ;;
  *"current directory"*) echo 'pwd' ;;
  *"count lines"*) echo 'wc  -l notes.txt' ;;
  *"make directories"*) echo 'mkdir -p a/b/c' ;;
  *"find logs"*) echo "find . -name '*.log'" ;;
  *) echo 'true' ;;
esac
