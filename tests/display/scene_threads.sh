#!/bin/sh
# Records the mailbox example (by itself, VIGIL_OUT) and runs scene_threads on it with
# the mailbox display. usage: scene_threads.sh BIN-DIR SRC-DIR
bin=$1 src=$2
work=$(mktemp -d)
VIGIL_OUT=$work/trace "$bin/mailbox" --seed 2 >/dev/null || { echo "FAIL: mailbox"; exit 1; }
if "$bin/scene_threads" "$work/trace" "$src/examples/mailbox/mailbox.vgd"; then
	rm -rf "$work"
else
	echo "kept $work"
	exit 1
fi
