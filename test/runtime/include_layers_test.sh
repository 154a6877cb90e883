#!/bin/bash
# The runtime's include rule (runtime/README.md): a file includes only
# headers of its own folder or of folders below it, and the process's hub
# headers (process_state.h, process_trace.h) only from the hub's own files
# and, for process_trace.h, from the interposers. Prints every include that
# breaks the rule (file:line -> header) and fails when there is one.
# Usage: include_layers_test.sh <source root>
set -u
root=${1:?usage: include_layers_test.sh <source root>}
cd "$root/runtime" || exit 2

# Level of a folder, bottom up ("." = the leaf headers at runtime/'s top).
level() {
  case $1 in
    .) echo 0 ;;
    time) echo 1 ;;
    io) echo 2 ;;
    libcalls) echo 3 ;;
    sleds) echo 4 ;;
    hot_path) echo 5 ;;
    process) echo 6 ;;
    interposers | api) echo 7 ;;
    *) echo -1 ;;
  esac
}

# The files of process/ below its hub: the hub includes them, so they may
# not include the hub's headers.
below_hub='^process/(idle_flusher|signal_handlers|config|function_filter|thread_index|finish|thread_registry|thread_fence|failure_reports|tracing_switch)\.h$|^process/(idle_flusher|signal_handlers|config|function_filter|thread_index|tracing_switch)\.cpp$'

bad=0
checked=0
while IFS= read -r file; do
  file=${file#./}
  dir=$(dirname "$file")
  from=$(level "$dir")
  if [ "$from" -lt 0 ]; then
    echo "$file: in a folder the rule does not place (add it to runtime/README.md and this test)"
    bad=1
    continue
  fi
  while IFS=: read -r line header; do
    checked=$((checked + 1))
    case $header in parlot/*) continue ;; esac
    hdir=$(dirname "$header")
    to=$(level "$hdir")
    if [ ! -f "$header" ]; then
      echo "$file:$line -> $header: not a path from runtime/"
      bad=1
    elif [ "$to" -gt "$from" ] || { [ "$to" -eq "$from" ] && [ "$hdir" != "$dir" ] && [ "$hdir" != . ]; }; then
      echo "$file:$line -> $header: upward (level $from includes level $to)"
      bad=1
    elif [[ $header =~ ^process/process_(state|trace)\.h$ && $file =~ $below_hub ]]; then
      echo "$file:$line -> $header: below the hub, includes it"
      bad=1
    elif [ "$header" = process/process_state.h ] && [ "$dir" != process ]; then
      echo "$file:$line -> $header: internal to process/"
      bad=1
    fi
  done < <(grep -n '^#include "' "$file" | sed 's/^\([0-9]*\):#include "\([^"]*\)".*/\1:\2/')
done < <(find . -path ./mpi -prune -o \( -name '*.h' -o -name '*.cpp' -o -name '*.S' \) -print | sort)

if [ "$checked" -eq 0 ]; then
  echo "no include found under $root/runtime"
  exit 1
fi
exit $bad
