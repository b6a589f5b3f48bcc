#!/bin/sh
# tests/opinfo/link_rt.sh: the link step tsaot runs (TSAOT_CC, codegen/emit.c's
# ts_cg_link_shared), for the OpInfo tests: the model's object against the
# runtime as one shared library, $TSAOT_OPINFO_RT (tests/opinfo/opinfo.cmake
# makes it from the runtime's static libraries), instead of the static
# libraries themselves. The object is the one tsaot writes either way; the
# link takes 0.04 s instead of 0.7 s, which makes a thousand models fit the
# tests' time.
#
#   link_rt.sh -shared -o OUT OBJ [FLAGS ...] LIB... SYSLIB... -lm -lpthread
#
# Everything but the runtime's static libraries (libtsaot_*.a, in the
# layers' link order) goes to cc as it came (the sanitizer flags of a
# sanitizer build among them); the shared library takes the first one's place.
set -eu
: "${TSAOT_OPINFO_RT:?set TSAOT_OPINFO_RT to the runtime shared library}"
rt_dir=$(dirname "$TSAOT_OPINFO_RT")
rt_file=$(basename "$TSAOT_OPINFO_RT")
placed=0
for a in "$@"; do
  shift
  case "$a" in
    */libtsaot_*.a)
      if [ "$placed" = 0 ]; then
        placed=1
        set -- "$@" "$rt_dir/$rt_file" "-Wl,-rpath,$rt_dir"
      fi
      continue ;;
    -Wl,--exclude-libs,ALL) continue ;;
  esac
  set -- "$@" "$a"
done
exec "${CC:-cc}" "$@"
