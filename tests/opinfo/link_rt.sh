#!/bin/sh
# tests/opinfo/link_rt.sh: the link step tsaot runs (TSAOT_CC, codegen/emit.c's
# ts_cg_link_shared), for the OpInfo tests: the model's object against the
# runtime as one shared library, $TSAOT_OPINFO_RT (tests/opinfo/opinfo.cmake
# makes it from the runtime's static libraries), instead of the static
# libraries themselves. The object is the one tsaot writes either way; the
# link takes 0.04 s instead of 0.7 s, which makes a thousand models fit the
# tests' time.
#
#   link_rt.sh -shared -o OUT OBJ [FLAGS ...] -Wl,--start-group LIB... -Wl,--end-group SYSLIB... -lm -lpthread
#
# Everything but the static libraries between the group markers goes to cc
# as it came (the sanitizer flags of a sanitizer build among them).
set -eu
: "${TSAOT_OPINFO_RT:?set TSAOT_OPINFO_RT to the runtime shared library}"
rt_dir=$(dirname "$TSAOT_OPINFO_RT")
rt_file=$(basename "$TSAOT_OPINFO_RT")
in_group=0
for a in "$@"; do
  shift
  case "$a" in
    -Wl,--start-group) in_group=1; continue ;;
    -Wl,--end-group) in_group=0; set -- "$@" "$rt_dir/$rt_file" "-Wl,-rpath,$rt_dir"; continue ;;
    -Wl,--exclude-libs,ALL) continue ;;
  esac
  [ "$in_group" = 1 ] && continue
  set -- "$@" "$a"
done
exec "${CC:-cc}" "$@"
