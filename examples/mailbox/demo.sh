#!/usr/bin/env bash
# `make demo`: records a run of the mailbox example with `vigil record` and shows what was
# recorded, then checks the recording against the run's ground truth.
#
# usage: examples/mailbox/demo.sh BUILD_DIR [MAILBOX-OPTIONS...]
# The trace, the ground truth and the dump go to a new directory under ${TMPDIR:-/tmp}
# (vigil-demo.XXXXXX), kept for exploring; the commands to explore it are printed last.
set -euo pipefail
if [ $# -lt 1 ] || [ ! -x "$1/bin/vigil" ] || [ ! -x "$1/bin/mailbox" ]; then
	echo "usage: demo.sh BUILD_DIR [MAILBOX-OPTIONS...]  (BUILD_DIR/bin holds vigil and mailbox)" >&2
	exit 2
fi
bin=$(cd "$1/bin" && pwd)
shift
here=$(cd "$(dirname "$0")" && pwd)
options=("$@")
[ ${#options[@]} -gt 0 ] || options=(--processors 3 --processes 6 --mailboxes 3 --messages 40 --seed 7)

dir=$(mktemp -d "${TMPDIR:-/tmp}/vigil-demo.XXXXXX")
trace=$dir/trace
truth=$dir/truth.json

section() { printf '\n== %s\n' "$*"; }

section "recording: vigil record -o $trace -- mailbox ${options[*]}"
if ! "$bin/vigil" record -o "$trace" -- "$bin/mailbox" "${options[@]}" --truth "$truth" \
	>"$dir/mailbox.out"; then
	cat "$dir/mailbox.out"
	echo "demo: FAILED: the recorded run of mailbox did not succeed" >&2
	exit 1
fi
cat "$dir/mailbox.out"
discarded=$(sed -n 's/.*(\([0-9]*\) events discarded).*/\1/p' "$dir/mailbox.out")

section "what was recorded"
if ! "$bin/vigil" dump --json "$trace" >"$dir/events.jsonl" 2>"$dir/dump.err"; then
	cat "$dir/dump.err" >&2
	echo "demo: FAILED: vigil dump could not read the trace $trace" >&2
	exit 1
fi
python3 "$here/summarize.py" <"$dir/events.jsonl"
echo "events discarded: ${discarded:-unknown} (as counted by the subject's runtime)"
cat "$dir/dump.err" # vigil dump's own account: discarded events, damaged places

section "the first events (vigil dump $trace | head -15)"
"$bin/vigil" dump "$trace" 2>/dev/null | head -15 || true

section "the trace against the ground truth ($truth)"
if python3 "$here/check_trace.py" "$truth" "$trace" --vigil "$bin/vigil"; then
	echo "the recording holds exactly the facts of the ground truth"
else
	echo "demo: FAILED: the recording differs from the ground truth (see above)" >&2
	exit 1
fi

section "a question, in TQuel: which processes were resumed by process P1?"
cat >"$dir/resumed.tq" <<'TQ'
range of S is SendMessage
range of W is Waiting
retrieve ResumedbyP1 (Process = W.Process)
valid at end of W
where S.Mailbox = W.Mailbox and S.Process = "P1"
when S precede end of W
TQ
sed 's/^/  /' "$dir/resumed.tq"
echo
if ! "$bin/vigil" query "$trace" -f "$dir/resumed.tq" --format table | sed 's/^/  /'; then
	echo "demo: vigil query failed" >&2
	exit 1
fi

section "the same question, live: only the sensors it needs (vigil watch)"
"$bin/vigil" explain -f "$dir/resumed.tq" --sensors "$here/mailbox.vgl" |
	sed -n '/sensors (α operators), after/,$p' | sed 's/^/  /'
echo
if ! "$bin/vigil" watch --sensors "$here/mailbox.vgl" -f "$dir/resumed.tq" --format text \
	--stats -- "$bin/mailbox" "${options[@]}" >"$dir/watch.out" 2>"$dir/watch.err"; then
	cat "$dir/watch.err"
	echo "demo: vigil watch failed" >&2
	exit 1
fi
grep '^ResumedbyP1' "$dir/watch.out" | sed 's/^/  /'
grep '^vigil watch' "$dir/watch.err" | sed 's/^/  /'
live=$(grep -c '^ResumedbyP1' "$dir/watch.out" || true)
recorded=$("$bin/vigil" query "$trace" -f "$dir/resumed.tq" --format json | wc -l)
if [ "$live" != "$recorded" ]; then
	echo "demo: FAILED: vigil watch found $live tuples, the full recording $recorded" >&2
	exit 1
fi
echo "  the same $live tuple(s) as from the full recording, from a fraction of its packets"

section "explore further"
cat <<MSG
  ask other questions (docs/tquel.md): $bin/vigil query $trace -f $dir/resumed.tq
  how it is evaluated:                $bin/vigil explain -f $dir/resumed.tq $trace
  ask it live, while it runs:         $bin/vigil watch --sensors $here/mailbox.vgl -f $dir/resumed.tq -- $bin/mailbox
  see it, as a timeline and a movie:  $bin/vigil ui $trace --display $here/mailbox.vgd   (then open the URL it prints)
  the picture at one instant, as SVG: $bin/vigil display render $here/mailbox.vgd $trace --at 50% -o mailbox.svg
  every event, merged in time order:  $bin/vigil dump $trace | less
  JSON lines, for scripts:            $bin/vigil dump --json $trace
  the same trace, read by babeltrace: babeltrace2 $trace
  what the run did, step by step:     less $truth
  other runs:                         $bin/mailbox --help
MSG
