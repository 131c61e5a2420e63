#!/usr/bin/env bash
# Man pages from the programs' own --help (help2man): vigil(1), vigild(1) and one
# vigil-COMMAND(1) for every command `vigil --help` lists.
# usage: cmake/gen_man.sh BIN_DIR OUT_DIR VERSION
set -euo pipefail
bin=$1 out=$2 version=$3
command -v help2man >/dev/null || { echo "gen_man.sh: help2man is missing (Debian: help2man; make deps)" >&2; exit 1; }
rm -rf "$out.tmp"
mkdir -p "$out.tmp/wrap"
see="vigil(1), vigild(1), and the docs/ folder of the sources"
page() { # page NAME SUMMARY PROGRAM
	help2man --no-info --no-discard-stderr --version-string="$version" --name="$2" \
		--section=1 --source="vigil $version" --manual="vigil manual" \
		--include=/dev/stdin "$3" -o "$out.tmp/$1.1" <<MAN
[SEE ALSO]
$see
MAN
}
# help2man names a page after its program: a wrapper named NAME runs PROGRAM [COMMAND],
# its --help with the examples one paragraph each (help2man would run them together).
wrap() { # wrap NAME PROGRAM [COMMAND]
	cat >"$out.tmp/wrap/$1" <<SH
#!/bin/sh
"$2" ${3:-} "\$@" | awk '/^examples:\$/ { ex = 1; print; next } /^\$/ { ex = 0 }
	ex && /^  [^ ]/ && n++ { print "" } { print }'
SH
	chmod +x "$out.tmp/wrap/$1"
}
wrap vigil "$bin/vigil"
wrap vigild "$bin/vigild"
page vigil "records what a system does as a historical database of typed events" "$out.tmp/wrap/vigil"
page vigild "the vigil collector" "$out.tmp/wrap/vigild"
"$bin/vigil" --help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) *\(.*\)$/\1\t\2/p' |
	while IFS=$'\t' read -r cmd summary; do
		wrap "vigil-$cmd" "$bin/vigil" "$cmd"
		page "vigil-$cmd" "$summary" "$out.tmp/wrap/vigil-$cmd"
	done
rm -rf "$out.tmp/wrap" "$out"
mv "$out.tmp" "$out"
