#!/bin/sh
# System "small": answers the rendered prompt ($1) from a table, no network. Wrong about
# Australia (Sydney), and about Canada it adds a remark the schema and the rubric reject.
answer() {
  printf '{"output": %s, "usage": {"tokens_in": %d, "tokens_out": %d}}\n' "$1" "${#2}" 9
}
case "$1" in
  *France*) answer '{"country": "France", "capital": "Paris"}' "$1" ;;
  *Japan*) answer '{"country": "Japan", "capital": "Tokyo"}' "$1" ;;
  *Australia*) answer '{"country": "Australia", "capital": "Sydney"}' "$1" ;;
  *Canada*) answer '{"country": "Canada", "capital": "Ottawa", "note": "I think"}' "$1" ;;
  *Brazil*) answer '{"country": "Brazil", "capital": "Brasília"}' "$1" ;;
  *Kenya*) answer '{"country": "Kenya", "capital": "Nairobi"}' "$1" ;;
  *) echo "I don't know" ;;
esac
