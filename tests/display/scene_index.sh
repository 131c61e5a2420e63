#!/bin/sh
# Records the mailbox example (by itself, VIGIL_OUT) and runs scene_index on it with the
# mailbox display and the good displays (every form; time as an axis).
# usage: scene_index.sh BIN-DIR SRC-DIR
bin=$1 src=$2
work=$(mktemp -d)
VIGIL_OUT=$work/trace "$bin/mailbox" --processors 3 --processes 8 --mailboxes 3 \
	--messages 300 --seed 48 --quantum 1 >/dev/null || { echo "FAIL: mailbox"; exit 1; }
if "$bin/scene_index" "$work/trace" "$src/examples/mailbox/mailbox.vgd" \
	"$src/tests/display/good/every_form.vgd" "$src/tests/display/good/axis.vgd"; then
	rm -rf "$work"
else
	echo "kept $work"
	exit 1
fi
