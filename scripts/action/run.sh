#!/usr/bin/env bash
# Runs `fcorr ci` for the composite action (action.yml, step "fcorr").
#
# Inputs arrive as environment variables (IN_*), never as ${{ }} text inside a script, so a PR
# title or branch name cannot inject shell. This script only maps them to flags; fcorr validates
# the values itself (exit 2 with a message naming the flag).
#
# fcorr writes its own step outputs (verdict, score, total, passed, failed, skipped, flaky,
# duration-ms, results-file, junit-file, ctrf-file, summary-file, comment-url, check-run-url; on
# exit 2/3 verdict=error and error) to $GITHUB_OUTPUT. This script adds:
#   exit-code    fcorr's exit code (0 pass, 1 gate failed, 2 usage/config, 3 infrastructure)
#   upload       "true" when the results should be uploaded as the baseline artifact
#   upload-path  absolute path of <out>/results.json
# It always exits 0 so that the upload step runs; action.yml's last step re-raises exit-code.
set -euo pipefail

out_line() {
  if [[ -n ${GITHUB_OUTPUT:-} ]]; then
    printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
  else
    printf '%s=%s\n' "$1" "$2" >&2
  fi
}

# error_summary CODE MESSAGE [LEAD]: what fcorr itself writes when it stops with an error, for the
# failures it cannot report (not started, crashed, killed): verdict=error and a job summary naming
# the cause. LEAD is the summary's sentence before the message.
error_summary() {
  out_line verdict error
  out_line error "$2"
  if [[ -n ${GITHUB_STEP_SUMMARY:-} && $(bool job-summary "${IN_JOB_SUMMARY:-true}" 2>/dev/null || echo true) == true ]]; then
    local fence='```'
    printf '## fcorr: error\n\n%s:\n\n%stext\n%s\n%s\n' \
      "${3:-fcorr stopped (exit $1) before it could report results}" "$fence" "$2" "$fence" >>"$GITHUB_STEP_SUMMARY"
  fi
}

# signal_name NUMBER -> SIGKILL, SIGTERM... (or "signal N" when the shell does not know it)
signal_name() {
  local name
  if name=$(kill -l "$1" 2>/dev/null) && [[ -n $name ]]; then printf 'SIG%s' "${name#SIG}"; else printf 'signal %s' "$1"; fi
}

# end_fence FILE: fcorr keeps the token of its ::stop-commands:: fence in FILE while the fence is
# up (src/publish/guard.rs). A killed fcorr cannot lift it; without this, every later line of the
# step, our own ::error included, would be fenced and never become an annotation.
end_fence() {
  local token
  [[ -s $1 ]] || return 0
  token=$(head -n 1 "$1")
  if [[ $token =~ ^[A-Za-z0-9]+$ ]]; then
    printf '::%s::\n' "$token"
  fi
}

fail() {
  # fail CODE MESSAGE: report, record the exit code for the last step, and stop
  printf '::error title=fcorr::%s\n' "$2"
  error_summary "$1" "$2"
  out_line exit-code "$1"
  out_line upload false
  exit 0
}

# bool NAME VALUE -> prints true|false, or fails with a usage error (exit 2)
bool() {
  local v
  v=$(printf '%s' "$2" | tr '[:upper:]' '[:lower:]' | tr -d '[:space:]')
  case "$v" in
    true | yes | on | 1) echo true ;;
    false | no | off | 0) echo false ;;
    *) return 1 ;;
  esac
}

to_unix() { if command -v cygpath >/dev/null 2>&1; then cygpath -u "$1"; else printf '%s' "$1"; fi; }
to_native() { if command -v cygpath >/dev/null 2>&1; then cygpath -w "$1"; else printf '%s' "$1"; fi; }

bin=${FCORR_BIN:-}
[[ -n $bin ]] || bin=$(command -v fcorr || true)
[[ -n $bin ]] || fail 3 "fcorr is not installed (the install step did not report a binary)"
bin=$(to_unix "$bin")
[[ -x $bin ]] || fail 3 "fcorr binary '$bin' does not exist or is not executable"

check_run=$(bool check-run "${IN_CHECK_RUN:-false}") ||
  fail 2 "input 'check-run' must be true or false, got '${IN_CHECK_RUN:-}'"
comment_charts=$(bool comment-charts "${IN_COMMENT_CHARTS:-false}") ||
  fail 2 "input 'comment-charts' must be true or false, got '${IN_COMMENT_CHARTS:-}'"
annotations=$(bool annotations "${IN_ANNOTATIONS:-true}") ||
  fail 2 "input 'annotations' must be true or false, got '${IN_ANNOTATIONS:-}'"
job_summary=$(bool job-summary "${IN_JOB_SUMMARY:-true}") ||
  fail 2 "input 'job-summary' must be true or false, got '${IN_JOB_SUMMARY:-}'"
token_can_write=$(bool token-can-write "${IN_TOKEN_CAN_WRITE:-false}") ||
  fail 2 "input 'token-can-write' must be true or false, got '${IN_TOKEN_CAN_WRITE:-}'"

out_dir=${IN_OUT:-fcorr-out}

args=(ci)
[[ -n ${IN_CONFIG:-} ]] && args+=(--config "$IN_CONFIG")
[[ -n ${IN_POLICY:-} ]] && args+=(--policy "$IN_POLICY")
[[ -n ${IN_FAIL_ON:-} ]] && args+=(--fail-on "$IN_FAIL_ON")
args+=(--baseline "${IN_BASELINE:-github}")
args+=(--comment "${IN_COMMENT:-update}")
[[ -n ${IN_COMMENT_WHEN:-} ]] && args+=(--comment-when "$IN_COMMENT_WHEN")
[[ -n ${IN_COMMENT_TAG:-} ]] && args+=(--comment-tag "$IN_COMMENT_TAG")
[[ $check_run == true ]] && args+=(--check-run)
[[ $comment_charts == true ]] && args+=(--comment-charts)
if [[ $annotations == true ]]; then args+=(--annotations); else args+=(--no-annotations); fi
[[ $job_summary == false ]] && args+=(--no-job-summary)
[[ $token_can_write == true ]] && args+=(--token-can-write)
[[ -n ${IN_COMMENT_BODY:-} ]] && args+=(--comment-body "$IN_COMMENT_BODY")
[[ -n ${IN_PATH_PREFIX:-} ]] && args+=(--path-prefix "$IN_PATH_PREFIX")
[[ -n ${IN_TEMPLATES:-} ]] && args+=(--templates "$IN_TEMPLATES")
[[ -n ${IN_SUITE_NAME:-} ]] && args+=(--suite-name "$IN_SUITE_NAME")
[[ -n ${IN_GROUP_BY:-} ]] && args+=(--group-by "$IN_GROUP_BY")
args+=(--out "$out_dir")

# files: one glob per line, like paths; "--files=GLOB" keeps a glob starting with "-" or "!" a value.
while IFS= read -r line || [[ -n $line ]]; do
  line=${line%$'\r'}
  line="${line#"${line%%[![:space:]]*}"}"
  line="${line%"${line##*[![:space:]]}"}"
  [[ -z $line || $line == \#* ]] && continue
  args+=("--files=$line")
done <<<"${IN_FILES:-}"

# paths: one per line (a path may contain spaces); blank lines and "# comments" are ignored.
# Passed after "--" so a path that starts with "-" is never read as a flag.
paths=()
while IFS= read -r line || [[ -n $line ]]; do
  line=${line%$'\r'}
  line="${line#"${line%%[![:space:]]*}"}"
  line="${line%"${line##*[![:space:]]}"}"
  [[ -z $line || $line == \#* ]] && continue
  paths+=("$line")
done <<<"${IN_PATHS:-}"
if ((${#paths[@]})); then
  args+=(-- "${paths[@]}")
fi

# Upload the results as the baseline artifact? auto = on a push to the default branch.
upload=$(printf '%s' "${IN_UPLOAD_BASELINE:-auto}" | tr '[:upper:]' '[:lower:]')
if [[ $upload == auto ]]; then
  upload=false
  if [[ ${GITHUB_EVENT_NAME:-} == push && -n ${DEFAULT_BRANCH:-} && ${GITHUB_REF:-} == "refs/heads/$DEFAULT_BRANCH" ]]; then
    upload=true
  fi
else
  upload=$(bool upload-baseline "$upload") ||
    fail 2 "input 'upload-baseline' must be auto, true or false, got '${IN_UPLOAD_BASELINE:-}'"
fi

case "$out_dir" in
  /* | [A-Za-z]:[\\/]*) results="$out_dir/results.json" ;;
  *) results="$(pwd)/$out_dir/results.json" ;;
esac

export FCORR_ARTIFACT_NAME="${IN_ARTIFACT_NAME:-fcorr-results}"

printf 'fcorr'
printf ' %q' "${args[@]}"
printf '\n'

# Where fcorr keeps its fence token (end_fence); private to this step, never seen by tests.
fence_file=$(mktemp "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/fcorr-fence.XXXXXXXX")
export FCORR_FENCE_FILE="$fence_file"
# results.json as it was before this run (a new one always differs: it holds its start time).
results_before=$([[ -f $results ]] && cksum <"$results" || true)

set +e
"$bin" "${args[@]}"
code=$?
set -e
unset FCORR_FENCE_FILE

# Whatever happened, no fence of fcorr's stays up past this point.
end_fence "$fence_file"
wrote_results=false
[[ -f $results && $(cksum <"$results") != "$results_before" ]] && wrote_results=true
rm -f "$fence_file" "$fence_file.tmp"

case $code in
  0) ;;
  1) echo "fcorr: a gate failed (exit 1); the check fails after the results are uploaded" ;;
  2) echo "fcorr: usage or configuration error (exit 2)" ;;
  3) echo "fcorr: harness or infrastructure error (exit 3)" ;;
  129 | 130 | 143)
    # SIGHUP, SIGINT, SIGTERM: fcorr stops the run and writes the results collected so far (unless
    # the signal came before any suite started); the runner sends these when a job is cancelled.
    why="fcorr was stopped by $(signal_name $((code - 128))) (exit $code)"
    if [[ $wrote_results == true ]]; then
      lead="$why after writing the results collected so far"
    else
      lead="$why before it could report results"
    fi
    echo "$lead"
    printf '::error title=fcorr::%s\n' "$lead"
    error_summary "$code" "$lead" "fcorr did not finish"
    ;;
  *)
    # A crash or a signal fcorr cannot handle (SIGKILL, a segfault): no verdict of its own.
    if ((code > 128)); then
      why="fcorr was killed by $(signal_name $((code - 128))) (exit $code)"
    else
      why="fcorr crashed (exit $code)"
    fi
    echo "$why"
    printf '::error title=fcorr::%s\n' "$why; the step log above has its last output"
    error_summary "$code" "$why; the step log above has its last output" "$why before it could report results"
    ;;
esac

if [[ $upload == true && ! -f $results ]]; then
  echo "fcorr: $results was not written; nothing to upload as the baseline"
  upload=false
fi

out_line exit-code "$code"
out_line upload "$upload"
out_line upload-path "$(to_native "$results")"
exit 0
