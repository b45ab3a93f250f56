#!/bin/sh
# System "large": right about every capital, but spells Brasília without its accent (the script
# grader accepts that, the exact JSON-pointer check does not) and answers Kenya in prose.
answer() {
  printf '{"output": %s, "usage": {"tokens_in": %d, "tokens_out": %d}}\n' "$1" "${#2}" 14
}
case "$1" in
  *France*) answer '{"country": "France", "capital": "Paris"}' "$1" ;;
  *Japan*) answer '{"country": "Japan", "capital": "Tokyo"}' "$1" ;;
  *Australia*) answer '{"country": "Australia", "capital": "Canberra"}' "$1" ;;
  *Canada*) answer '{"country": "Canada", "capital": "Ottawa"}' "$1" ;;
  *Brazil*) answer '{"country": "Brazil", "capital": "Brasilia"}' "$1" ;;
  *Kenya*) echo 'The capital of Kenya is Nairobi.' ;;
  *) echo "I don't know" ;;
esac
