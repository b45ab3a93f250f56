#!/bin/sh
# The system under test of the eval benchmark: answers a prompt ($1) with a shell command in a
# few milliseconds (one sh start, no network). Four in five answers are right.
case "$1" in
  *"#"*[05]:*) echo 'ls -l' ;;              # wrong for tasks ending in 0 or 5
  *"list files"*) echo 'ls -la' ;;
  *"current directory"*) echo 'pwd' ;;
  *"count lines"*) echo 'wc -l notes.txt' ;;
  *"make directories"*) echo 'mkdir -p a/b/c' ;;
  *"find logs"*) echo "find . -name '*.log'" ;;
  *) echo 'true' ;;
esac
