# The calculator's tests, as TAP; exits 1 when any test fails.
. ./calc.sh
failed=0
n=0
check() {
    n=$((n + 1))
    if [ "$2" = "$3" ]; then echo "ok $n - $1"; else echo "not ok $n - $1"; echo "  # expected $3, got $2"; failed=1; fi
}
echo "TAP version 13"
echo "1..4"
check test_add "$(add 2 3)" 5
check test_sub "$(sub 5 3)" 2
check test_mul "$(mul 4 3)" 12
check test_div "$(div 8 2)" 4
exit $failed
