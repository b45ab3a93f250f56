#!/bin/sh
# A stand-in for an agent CLI, so the example needs no model: it reads the task (JSON on stdin,
# also in the file $FCORR_TASK_FILE) and, in the task's copy of the repository:
#   fix-add  edits calc.sh correctly and reports its usage as JSON on stdout  -> passed
#   fix-mul  prints a patch that is wrong (mul subtracts)                      -> failed
#   fix-div  crashes                                                           -> error
cat > /dev/null
case "$FCORR_TASK_ID" in
fix-add)
    sed -i 's/^add() { echo \$((\$1 - \$2)); }/add() { echo $(($1 + $2)); }/' calc.sh
    echo '{"usage": {"prompt_tokens": 1200, "completion_tokens": 300, "llm_calls": 2}}'
    ;;
fix-mul)
    echo '{"tokens": 900, "llm_calls": 1}' > "$FCORR_USAGE_FILE"
    cat <<'PATCH'
--- a/calc.sh
+++ b/calc.sh
@@ -3,3 +3,3 @@
 sub() { echo $(($1 - $2)); }
-mul() { echo $(($1 + $2)); }
+mul() { echo $(($1 - $2)); }
 div() { echo $(($1 % $2)); }
PATCH
    ;;
*)
    echo "agent: cannot reach the model endpoint" >&2
    exit 2
    ;;
esac
