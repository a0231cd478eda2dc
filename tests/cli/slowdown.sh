# slowdown.sh - sourced by the test and device scripts. FATTN_TEST_SLOWDOWN
# (default 1) says how many times slower than an idle machine this one may be
# (scripts/test.sh sets it with meson's --timeout-multiplier); every
# wall-clock bound a verdict depends on (a watchdog, a wait for progress) is
# multiplied by it, as tests/t.h's t_ms() does for the C tests.
slowdown=${FATTN_TEST_SLOWDOWN:-1}
if ! awk -v f="$slowdown" 'BEGIN { exit !(f ~ /^[0-9]+(\.[0-9]+)?$/ && f >= 1 && f <= 1000) }'; then
    echo "FATTN_TEST_SLOWDOWN=$slowdown: expected a number from 1 to 1000" >&2
    exit 99
fi
# scaled N: N times the slowdown, rounded up to a whole number.
scaled() { awk -v n="$1" -v f="$slowdown" 'BEGIN { x = n * f; printf "%d\n", x == int(x) ? x : int(x) + 1 }'; }
