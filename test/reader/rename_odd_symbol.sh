#!/bin/sh
# rename_odd_symbol.sh OBJCOPY IN.o OUT.o: renames odd_name to the bytes
# "odd" 0xff 0x1b "[31mname" (invalid UTF-8 and a terminal escape) for the
# parlot-read escaping test (odd_names_fixture.c).
set -eu
exec "$1" --redefine-sym "odd_name=$(printf 'odd\377\033[31mname')" "$2" "$3"
