# mask.sed - what differs between two runs of the same build: dates and
# times, durations, the tool's version, temporary paths, hostnames.
s/[0-9]\{4\}-[0-9]\{2\}-[0-9]\{2\}[T ][0-9]\{2\}:[0-9]\{2\}:[0-9]\{2\}\(\.[0-9]*\)\?Z\?/TIMESTAMP/g
s/[0-9]\{1,\}\(\.[0-9]\{1,\}\)\? \?\(ms\|s\|min\)\b/DURATION/g
s/fattn-tune [0-9][0-9a-z.+-]*/fattn-tune VERSION/g
s/"tool_version": *"[^"]*"/"tool_version":"VERSION"/g
s#/tmp/fattn-snap\.[A-Za-z0-9]*#WORK#g
s#/[^ ]*/search/space\.json#SRC/search/space.json#g
/^fattn-tune: compiled [0-9]*\/[0-9]*  rejected after compile/d
s/"\(compilation\|benchmark\|framework\|search_algorithm\|validation\)": [0-9.e+-]*/"\1": DURATION/g
