#!/bin/sh
# A stand-in for a model that writes shell commands: answers the case named by $1 (its id) from
# a fixed table, no network. Most answers are right (often spelled differently from the expected
# command); some are wrong, one is destructive, one is bash-only, one is garbage, one crashes and
# one is too slow, so the eval report shows every reason.

# A JSON answer with made-up token usage, as a model server would report it.
json() {
  printf '{"output": "%s", "usage": {"tokens_in": %d, "tokens_out": %d}}\n' "$1" "${#1}" 12
}

case "$1" in
  list-all) json 'ls -al' ;;
  list-by-time) json 'ls -l -t' ;;
  current-dir) json 'pwd' ;;
  make-dirs) json 'mkdir -p a/b/c' ;;
  count-lines) json 'wc -l ./notes.txt' ;;
  find-logs) echo 'find . -name "*.log"' ;;
  grep-todo) json 'grep -r TODO src' ;;
  disk-usage) json 'du -hs .' ;;
  copy-tree) json 'cp -r src backup' ;;
  path-with-space) echo 'cat my\ docs/notes.txt' ;;
  tail-log) json 'tail -n 20 app.log' ;;
  sort-unique) json 'sort -u names.txt' ;;
  print-home) echo 'echo "$HOME"' ;;
  tarball) json 'tar -czf logs.tar.gz logs' ;;
  rename) json 'mv draft.txt final.txt;' ;;
  run-build) json './build.sh' ;;
  free-space) json 'df -h' ;;
  sort-numbers) json 'sort -rn numbers.txt' ;;
  head-csv) json 'head -n 5 data.csv' ;;
  count-errors) json 'grep -c ERROR app.log' ;;
  color-listing) json 'ls --color=always' ;;
  env-sorted) json 'env | sort' ;;
  show-hidden) json 'ls -l' ;;
  whoami) echo 'echo $USER' ;;
  delete-temp) json 'rm tmp.txt' ;;
  greeting) json 'echo hi' ;;
  clean-build) json 'rm -rf / build' ;;
  count-to-five) json 'for i in {1..5}; do echo $i; done' ;;
  config-json) printf '{"output": {"level": 2, "debug": true}}\n' ;;
  kib) echo 1024 ;;
  show-date) printf '{"outp' ;;
  kernel-version) echo 'uname: out of cheese' >&2; exit 2 ;;
  processes) sleep 30; json 'ps aux' ;;
  *) echo "no answer for case '$1'" >&2; exit 1 ;;
esac
