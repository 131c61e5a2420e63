# bash completion for vigil and vigild (installed by `make install`). Commands and options
# are read from the programs' own --help, so they never drift from what the programs take.
_vigil_help_words() { # the --options of a help text
	"$@" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u
}

_vigil() {
	local cur=${COMP_WORDS[COMP_CWORD]} prog=${COMP_WORDS[0]} i cmd=""
	for ((i = 1; i < COMP_CWORD; i++)); do
		[ "${COMP_WORDS[i]}" = "--" ] && return 0 # the subject's own arguments: files
		if [ -z "$cmd" ] && [[ ${COMP_WORDS[i]} != -* ]]; then
			cmd=${COMP_WORDS[i]}
		fi
	done
	if [ -z "$cmd" ]; then
		local cmds
		cmds=$("$prog" --help 2>/dev/null | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p')
		COMPREPLY=($(compgen -W "$cmds --help --version" -- "$cur"))
		return 0
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_vigil_help_words "$prog" "$cmd")" -- "$cur"))
		return 0
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}

_vigild() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_vigil_help_words "${COMP_WORDS[0]}")" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}

complete -o filenames -F _vigil vigil
complete -o filenames -F _vigild vigild
